/// Why a plugin could not be loaded, unloaded or called. The plugin, the file, the symbol
/// and the system's own words (`dlerror()` or errno text) are fields; the message a user
/// reads is made from them.
public struct LoaderError: Error, Sendable, CustomStringConvertible, Equatable {
    /// What kind of failure it is; each one names the step that failed.
    public enum Code: String, Sendable, Equatable {
        /// No plugin or file of that name; validation failed; `dlopen` failed; the entry symbol is missing; the plugin's handshake was refused; the shadow copy could not be made.
        case notFound, invalid, dlopenFailed, symbolMissing, handshakeFailed, copyFailed
        /// A required plugin is not there; requirements form a cycle; a required plugin's version is out of range; a required plugin failed to load; loaded plugins still require this one.
        case dependencyMissing, dependencyCycle, dependencyVersion, dependencyFailed, hasDependents
        /// A C image stayed mapped after `dlclose`; a generation's lifecycle refused the step; already loaded; not loaded; two folders hold the same plugin id.
        case stillMapped, lifecycle, alreadyLoaded, notLoaded, duplicateID
        /// The library's bytes differ from those validated.
        case changedSinceValidation
        /// A screen step failed (`screenError` says which and why).
        case screenFailed
        /// The plugin's worker process died or stopped answering.
        case workerFailed
        /// The trial load of an in-process generation failed (`CanaryLoad`).
        case canaryFailed
    }

    /// What kind of failure it is.
    public var code: Code
    /// The plugin id (or the folder when no id is known yet).
    public var plugin: String
    /// The file involved, if any.
    public var path: String?
    /// The symbol involved, if any.
    public var symbol: String?
    /// The system's explanation: `dlerror()` or errno text.
    public var systemError: String?
    /// Anything else, in words.
    public var detail: String?
    /// The screen failure underneath, when a screen step failed (a reload's reopen).
    public var screenError: ScreenError?
    /// Set when a reload failed and put the previous generation back.
    public var rollback: Rollback?

    /// Where a failed reload stopped, and the generation it went back to.
    public struct Rollback: Sendable, Equatable {
        /// The step of a reload that failed.
        public enum Step: String, Sendable {
            /// Loading the new generation (its library, handshake, load-time code or worker).
            case load
            /// Reopening the plugin's screens with the new generation's instances.
            case reopen
        }

        /// The step that failed.
        public var step: Step
        /// The generation the plugin is back on.
        public var generation: Int

        package init(step: Step, generation: Int) {
            self.step = step
            self.generation = generation
        }
    }

    /// An error of `code` for `plugin`, with the file, symbol, system text and detail involved.
    public init(_ code: Code, plugin: String, path: String? = nil, symbol: String? = nil, systemError: String? = nil, detail: String? = nil) {
        self.code = code
        self.plugin = plugin
        self.path = path
        self.symbol = symbol
        self.systemError = systemError
        self.detail = detail
    }

    /// An error whose whole explanation is `detail`.
    public init(_ code: Code, plugin: String, _ detail: String) {
        self.init(code, plugin: plugin, detail: detail)
    }

    /// One line: what failed, on what, and why.
    public var message: String {
        guard let rollback else { return cause }
        return "reload failed at \(rollback.step.rawValue): \(cause); rolled back to generation \(rollback.generation)"
    }

    private var cause: String {
        var parts: [String] = []
        switch code {
        case .symbolMissing:
            parts.append("symbol '\(symbol ?? "?")' not found" + (path.map { " in \($0)" } ?? ""))
        case .changedSinceValidation:
            parts.append("\(path ?? "the library") changed after it was validated; validate it again (discover or reload)")
        case .dlopenFailed:
            parts.append("dlopen \(path ?? "?") failed")
        case .stillMapped:
            parts.append("\(path ?? "the image") is still mapped after dlclose")
        default:
            if let path { parts.append(path) }
            if let symbol { parts.append("symbol '\(symbol)'") }
        }
        if let detail { parts.append(detail) }
        if let systemError { parts.append(systemError) }
        return parts.joined(separator: ": ")
    }

    /// `plugin: message`, the line a user reads.
    public var description: String { "\(plugin): \(message)" }
}
