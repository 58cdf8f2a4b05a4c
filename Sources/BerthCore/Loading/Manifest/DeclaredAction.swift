/// An action a screen declares it accepts (manifest `actions`, from `Screen.actions` in a
/// Swift plugin): a name `send` may use, with an optional one-line summary for `actions`.
public struct DeclaredAction: Sendable, Hashable, Codable {
    /// The name `handle(action:payload:)` receives.
    public var name: String
    /// What the action does, in one line; nil when the plugin gives none.
    public var summary: String?

    /// An action named `name`, with an optional one-line summary.
    public init(name: String, summary: String? = nil) {
        self.name = name
        self.summary = summary
    }

    /// An action name: starts with a letter; letters, digits, '-', '_' and '.' (no spaces,
    /// and never `#`, which `send #SCREEN` reserves).
    public static func isValidName(_ text: String) -> Bool {
        guard let first = text.first, first.isASCII, first.isLetter else { return false }
        return text.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "-_.".contains($0)) }
    }

    private enum CodingKeys: String, CodingKey { case name, summary }

    /// Decodes `"name"` or `{"name": …, "summary": …}` (a C plugin's `berth_describe_v1`
    /// may write either, as its manifest may).
    public init(from decoder: any Decoder) throws {
        if let name = try? decoder.singleValueContainer().decode(String.self) {
            self.init(name: name)
            return
        }
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(name: try container.decode(String.self, forKey: .name),
                  summary: try container.decodeIfPresent(String.self, forKey: .summary))
    }

    /// The longest summary a manifest may give (characters).
    public static let summaryLimit = 200
}

extension PluginManifest {
    /// The actions the screen at `route` declares; empty when it declares none, and then
    /// it accepts any name.
    public func declaredActions(of route: String) -> [DeclaredAction] {
        actions[route] ?? []
    }
}
