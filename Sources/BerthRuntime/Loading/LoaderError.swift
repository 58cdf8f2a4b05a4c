/// Why a plugin could not be loaded, unloaded or called. Names the plugin, the file or
/// symbol involved and, for dynamic-linker failures, the `dlerror()` text.
public struct LoaderError: Error, Sendable, CustomStringConvertible, Equatable {
    public enum Code: String, Sendable, Equatable {
        case notFound, invalid, dlopenFailed, symbolMissing, handshakeFailed, copyFailed
        case dependencyMissing, dependencyCycle, dependencyVersion, hasDependents
        case stillMapped, lifecycle, alreadyLoaded, notLoaded, duplicateID
    }

    public var code: Code
    /// The plugin id (or path when no id is known yet).
    public var plugin: String
    /// What went wrong, in one line.
    public var message: String

    public init(_ code: Code, plugin: String, _ message: String) {
        self.code = code
        self.plugin = plugin
        self.message = message
    }

    public var description: String { "\(plugin): \(message)" }
}
