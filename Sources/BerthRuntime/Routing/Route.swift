@_spi(Engine) import BerthCore
/// A screen a plugin provides: the plugin's id and the route's name within it, as fields.
/// Its text (`description`) is `PLUGIN.ID/ROUTE`, or the bare `ROUTE` when the plugin is
/// left out, which the host resolves to the one loaded plugin that declares the route.
///
/// Make one from fields (`Route(plugin:name:)`, `Route(name:)`), from text a person or a
/// file gave (`try Route(parsing:)`, which names the text in a one-line error), or from a
/// string literal in code (`host.push("com.example.counter/counter")`): a literal is
/// program text, so a malformed one stops the program with the parsing error, as a
/// failed `precondition` does. There is no conversion from an arbitrary `String`.
public struct Route: Hashable, Sendable, CustomStringConvertible, ExpressibleByStringLiteral, Codable {
    /// The plugin that provides the screen (`com.example.counter`); nil for a bare route.
    public let pluginID: String?
    /// The route's name within its plugin (`counter`).
    public let name: String

    /// The route `name` of plugin `pluginID`, as given (no syntax check; a route that does
    /// not exist fails when it is opened).
    public init(plugin pluginID: String, name: String) {
        self.pluginID = pluginID
        self.name = name
    }

    /// The bare route `name`: opened by the one loaded plugin that declares it.
    public init(name: String) {
        self.pluginID = nil
        self.name = name
    }

    /// Parses `PLUGIN.ID/ROUTE` or a bare `ROUTE`: a plugin id of lower-case dot-separated
    /// labels, a route name of a letter then letters, digits, '-', '_' or '.'.
    public init(parsing text: String) throws(SyntaxError) {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard !text.isEmpty else { throw SyntaxError(text: text, "is empty (write PLUGIN.ID/ROUTE or ROUTE)") }
        guard parts.count <= 2 else { throw SyntaxError(text: text, "has more than one '/' (write PLUGIN.ID/ROUTE or ROUTE)") }
        let name = String(parts[parts.count - 1])
        if parts.count == 2 {
            let pluginID = String(parts[0])
            guard ManifestNames.isReverseDNS(pluginID) else {
                throw SyntaxError(text: text, "has no plugin id before '/' ('\(pluginID)' is not lower-case dot-separated labels, e.g. com.example.counter)")
            }
            self.pluginID = pluginID
        } else {
            self.pluginID = nil
        }
        guard ManifestNames.isRouteName(name) else {
            throw SyntaxError(text: text, "has no route name ('\(name)' is not a letter followed by letters, digits, '-', '_' or '.')")
        }
        self.name = name
    }

    /// Parses a literal in code; a malformed one is a programming error and stops the program.
    public init(stringLiteral text: String) {
        do {
            try self.init(parsing: text)
        } catch {
            preconditionFailure(error.message)
        }
    }

    /// `PLUGIN.ID/ROUTE`, or `ROUTE` for a bare route.
    public var description: String { pluginID.map { "\($0)/\(name)" } ?? name }

    /// Decodes the text form (`description`), parsed as `init(parsing:)` parses it.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let text = try container.decode(String.self)
        do {
            try self.init(parsing: text)
        } catch {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: error.message)
        }
    }

    /// Encodes the text form (`description`).
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }

    /// Text that is not a route: which text, and what is wrong with it, in one line.
    public struct SyntaxError: Error, Sendable, Equatable, CustomStringConvertible {
        /// The text as given.
        public var text: String
        /// `route 'TEXT' …`: the line a person reads.
        public var message: String

        init(text: String, _ problem: String) {
            self.text = text
            self.message = "route '\(text)' \(problem)"
        }

        /// The message.
        public var description: String { message }
    }
}
