import BerthRuntime

/// View input as the shell's commands take it from a person: `tap N|ID`, `toggle N|ID`,
/// `type N|ID TEXT`, `step N|ID +|-`, `select N|ID INDEX`. The text is turned into a typed
/// `ViewInput` here, at the edge, so a malformed value is refused before any plugin runs.
extension ViewInput {
    /// The shell commands that send view input.
    static let commandNames = ["tap", "toggle", "type", "step", "select"]

    /// How `command` is written.
    static func usage(of command: String) -> String {
        switch command {
        case "type": "type N|ID TEXT"
        case "step": "step N|ID +|-"
        case "select": "select N|ID INDEX"
        default: "\(command) N|ID"
        }
    }

    /// The input `command` sends with the words after the view (`values`, joined by spaces
    /// for `type`); nil when `command` is not one of `commandNames`.
    init?(command: String, values: [String]) throws(ShellError) {
        let value = values.joined(separator: " ")
        switch command {
        case "tap": self = .tap
        case "toggle": self = .toggle
        case "type", "step", "select":
            guard !values.isEmpty else { throw ShellError("usage: \(Self.usage(of: command))") }
            switch command {
            case "type": self = .type(value)
            case "step":
                switch value {
                case "+": self = .step(.up)
                case "-": self = .step(.down)
                default: throw ShellError("step takes + or -, got '\(value)'")
                }
            default:
                guard let index = Int(value), index >= 0 else { throw ShellError("select takes an option index (0, 1, …), got '\(value)'") }
                self = .select(index)
            }
        default: return nil
        }
    }
}
