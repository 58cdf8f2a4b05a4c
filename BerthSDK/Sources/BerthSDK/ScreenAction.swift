/// An action a screen declares it accepts, in `Screen.actions`: the name its
/// `handle(action:payload:)` receives, with an optional one-line summary.
///
/// `berth pack` writes the declarations into the manifest's `actions`, the host's `actions`
/// command lists them, and `send` refuses a name the screen does not declare. A string
/// literal is an action with no summary:
///
/// ```swift
/// static let actions: [ScreenAction] = ["increment", ScreenAction("report", summary: "Logs the count")]
/// ```
public struct ScreenAction: Sendable, Hashable, ExpressibleByStringLiteral {
    /// The name `handle(action:payload:)` receives: a letter, then letters, digits, '-',
    /// '_' or '.'.
    public let name: String
    /// What the action does, in one line; shown by the host's `actions` command.
    public let summary: String?

    /// An action named `name`, described by `summary`.
    public init(_ name: String, summary: String? = nil) {
        self.name = name
        self.summary = summary
    }

    /// An action named by a string literal, with no summary.
    public init(stringLiteral name: String) {
        self.init(name)
    }
}
