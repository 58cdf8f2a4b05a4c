import FoundationEssentials

extension RouteContext {
    /// A payload as `Self`, or a `.decode` error of one line naming the type, the key that
    /// is missing or of another type, and the keys that arrived (`cannot decode
    /// com.example.tags.TagChoice: key 'label' is missing; the sender sent {tag}`), not the
    /// `DecodingError` dump.
    static func decode(_ payload: [UInt8]) throws -> Self {
        do {
            return try JSONDecoder().decode(Self.self, from: Data(payload))
        } catch let error as DecodingError {
            throw BerthError(code: .decode, message: "cannot decode \(contextType): \(describe(error, payload: payload))")
        }
    }

    private static func describe(_ error: DecodingError, payload: [UInt8]) -> String {
        let (problem, path): (String, [any CodingKey])
        switch error {
        case .keyNotFound(let key, let context):
            (problem, path) = ("key '\(dotted(context.codingPath + [key]))' is missing", context.codingPath)
        case .typeMismatch(let type, let context):
            (problem, path) = ("key '\(dotted(context.codingPath))' is not \(article(type))", Array(context.codingPath.dropLast()))
        case .valueNotFound(let type, let context):
            (problem, path) = ("key '\(dotted(context.codingPath))' is null, not \(article(type))", Array(context.codingPath.dropLast()))
        case .dataCorrupted(let context):
            guard !context.codingPath.isEmpty else { return "the payload is not JSON" }
            (problem, path) = ("key '\(dotted(context.codingPath))' has a value it cannot take", Array(context.codingPath.dropLast()))
        @unknown default:
            return "\(error)"
        }
        guard let keys = try? JSONDecoder().decode(ArrivedKeys.self, from: Data(payload)).keys(at: path.map(\.stringValue)) else { return problem }
        return "\(problem); the sender sent {\(keys.joined(separator: ", "))}"
    }

    private static func dotted(_ path: [any CodingKey]) -> String {
        path.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }.joined(separator: ".")
    }

    private static func article(_ type: Any.Type) -> String {
        let name = "\(type)"
        return ("AEIOU".contains(name.first ?? "x") ? "an " : "a ") + name
    }
}

/// The object keys of a JSON payload, nested, to say what a sender sent.
private struct ArrivedKeys: Decodable {
    private struct AnyKey: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    private let children: [String: ArrivedKeys]

    init(from decoder: any Decoder) throws {
        guard let object = try? decoder.container(keyedBy: AnyKey.self) else {
            children = [:]
            return
        }
        var children: [String: ArrivedKeys] = [:]
        for key in object.allKeys { children[key.stringValue] = (try? object.decode(ArrivedKeys.self, forKey: key)) ?? ArrivedKeys(children: [:]) }
        self.children = children
    }

    private init(children: [String: ArrivedKeys]) { self.children = children }

    /// The sorted keys of the object at `path` (object keys only), or nil.
    func keys(at path: [String]) -> [String]? {
        guard let first = path.first else { return children.keys.sorted() }
        return children[first]?.keys(at: Array(path.dropFirst()))
    }
}
