@_spi(Engine) import BerthCore
/// One thing wrong with a plugin, found before any of its code runs (or while loading it).
///
/// Printed as one line, `path: field: message`, so a user knows which file and which field
/// to fix. Warnings (an unknown manifest field) never stop a plugin from loading.
public struct PluginProblem: Sendable, Equatable, CustomStringConvertible, Codable {
    /// Whether the problem stops the plugin (`error`) or is only reported (`warning`).
    public enum Severity: String, Sendable, Codable {
        /// Stops the plugin from loading; is only reported.
        case error, warning
    }

    /// The file the problem is in (a manifest or a library).
    public var path: String
    /// The manifest field, symbol or check involved (`entry`, `exports[1].params[0]`, `elf`).
    public var field: String
    /// What is wrong and, where it helps, what was expected.
    public var message: String
    /// Whether it stops the plugin from loading.
    public var severity: Severity

    /// A problem in `field` of the file at `path`.
    public init(path: String, field: String, message: String, severity: Severity = .error) {
        self.path = path
        self.field = field
        self.message = message
        self.severity = severity
    }

    /// `path: field: message`, with `warning: ` before the message of a warning.
    public var description: String {
        let prefix = severity == .warning ? "warning: " : ""
        return "\(path): \(field): \(prefix)\(message)"
    }
}

extension [PluginProblem] {
    /// True when any problem is an error (warnings alone do not block a plugin).
    var hasErrors: Bool { contains { $0.severity == .error } }
    /// The problem that stops a plugin: the first error (a warning alone stops nothing), else
    /// the first problem.
    var firstError: PluginProblem? { first { $0.severity == .error } ?? first }
}
