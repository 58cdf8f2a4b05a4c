import Foundation

/// Colour in human output: only on a terminal, and never with `NO_COLOR` set (any value,
/// https://no-color.org) or `TERM=dumb`. Piped output and scripts' output stay plain.
enum TerminalStyle {
    case error, warning, event

    private var code: String {
        switch self {
        case .error: "1;31"
        case .warning: "1;33"
        case .event: "2"
        }
    }

    /// `text` in this style when `descriptor` takes colour.
    func paint(_ text: String, for descriptor: Int32) -> String {
        guard Self.colours(descriptor) else { return text }
        return "\u{1B}[\(code)m\(text)\u{1B}[0m"
    }

    private static let standardOutputColours = decide(STDOUT_FILENO)
    private static let standardErrorColours = decide(STDERR_FILENO)

    private static func colours(_ descriptor: Int32) -> Bool {
        descriptor == STDERR_FILENO ? standardErrorColours : descriptor == STDOUT_FILENO ? standardOutputColours : false
    }

    private static func decide(_ descriptor: Int32) -> Bool {
        let environment = ProcessInfo.processInfo.environment
        return isatty(descriptor) == 1 && environment["NO_COLOR"] == nil && environment["TERM"] != "dumb"
    }
}
