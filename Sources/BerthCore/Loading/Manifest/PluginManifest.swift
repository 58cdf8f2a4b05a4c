/// The language runtime a plugin image was built with. Decides how it is unloaded: a Swift
/// image is never `dlclose`d (see Docs/loading.md), a C image is.
package enum PluginRuntimeKind: String, Sendable, Codable {
    /// Built with Swift (BerthSDK): never unmapped.
    case swift
    /// Plain C: closed with `dlclose` when unloaded.
    case c
}

/// Where a plugin's code runs.
public enum IsolationMode: String, Sendable, Codable {
    /// In a worker process of its own: a crash or hang is that plugin's alone.
    case process
    /// Mapped into the host's process: fastest, but a crash takes the host down.
    case inProcess = "in-process"
}

/// When a host loads a plugin it discovered.
package enum PluginActivation: String, Sendable, Codable {
    /// At start (`berth run`), with every other valid plugin.
    case eager
    /// On first use: when one of its routes is opened or one of its exports is called.
    case lazy
}

/// A plugin's manifest (`plugin.json`), version 1. See Docs/manifest.md for every field.
package struct PluginManifest: Sendable, Equatable {
    /// Reverse-DNS identifier, unique among loaded plugins (`com.example.counter`).
    package var id: String
    /// Human-readable name.
    package var name: String
    /// The plugin's own version.
    package var version: SemanticVersion
    /// The C ABI version the library was built against (major, minor).
    package var abi: ABIVersion
    /// Library file name relative to the manifest's folder.
    package var library: String
    /// The entry symbol returning the `berth_plugin_v1` table.
    package var entry: String
    /// The language runtime of the image.
    package var runtime: PluginRuntimeKind
    /// C functions callable through libffi.
    package var exports: [ExportSignature]
    /// Screens the plugin provides, by route name.
    package var routes: [String]
    /// Other plugins this one needs, by id, with a semantic version range each.
    package var requires: [Dependency]
    /// Keys of values the plugin persists outside its module instances.
    package var persist: [String]
    /// Expected SHA-256 of the library, lower-case hex, when the author pinned it.
    package var sha256: String?
    /// Optional one-line description.
    package var description: String?
    /// Where the plugin asks to run; nil leaves it to the host's default.
    package var isolation: IsolationMode? = nil
    /// The worker group it shares a worker with when it runs isolated (`"isolation":
    /// {"group": NAME}`): members share services as in process. Where it runs is still the
    /// host's default.
    package var isolationGroup: String? = nil
    /// The capabilities the manifest declares; nil when it has no `capabilities` field.
    package var capabilities: Set<Capability>? = nil
    /// Paths an isolated plugin may read or write beyond its own folders (`files`).
    package var files = FileGrants()

    /// What the host grants: the declared capabilities, or `Capability.undeclaredDefault`.
    package var grantedCapabilities: Set<Capability> { capabilities ?? Capability.undeclaredDefault }
    /// When the host loads it; nil leaves it to the host (eager unless `--lazy`).
    package var activation: PluginActivation? = nil
    /// The actions each route's screen declares (`actions`); a route missing here declares
    /// none, and accepts any action name.
    package var actions: [String: [DeclaredAction]] = [:]
    /// What an isolated plugin's worker may take (`limits`); the host's settings are the ceiling.
    package var limits = PluginLimits()
    /// Host variables passed to an isolated plugin's worker beyond the allowlist (`environment`).
    package var environment: [String] = []
    /// The service contracts it provides and calls, by name (`contracts`).
    package var contracts = PluginContracts()

    package init(id: String, name: String, version: SemanticVersion, abi: ABIVersion, library: String, entry: String, runtime: PluginRuntimeKind, exports: [ExportSignature], routes: [String], requires: [Dependency], persist: [String], sha256: String?, description: String?, isolation: IsolationMode? = nil, isolationGroup: String? = nil, capabilities: Set<Capability>? = nil, files: FileGrants = FileGrants(), activation: PluginActivation? = nil, actions: [String: [DeclaredAction]] = [:], limits: PluginLimits = PluginLimits(), environment: [String] = [], contracts: PluginContracts = PluginContracts()) {
        self.id = id
        self.name = name
        self.version = version
        self.abi = abi
        self.library = library
        self.entry = entry
        self.runtime = runtime
        self.exports = exports
        self.routes = routes
        self.requires = requires
        self.persist = persist
        self.sha256 = sha256
        self.description = description
        self.isolation = isolation
        self.isolationGroup = isolationGroup
        self.capabilities = capabilities
        self.files = files
        self.activation = activation
        self.actions = actions
        self.limits = limits
        self.environment = environment
        self.contracts = contracts
    }

    /// One entry of `requires`.
    package struct Dependency: Sendable, Equatable {
        /// The plugin id it needs.
        package var id: String
        /// The versions of it that will do.
        package var range: VersionRange

        package init(id: String, range: VersionRange) {
            self.id = id
            self.range = range
        }
    }

    /// Finds an export by symbol name.
    package func export(named symbol: String) -> ExportSignature? {
        exports.first { $0.symbol == symbol }
    }
}

/// An ABI version as `major.minor` (packed like `BERTH_ABI_VERSION` in berth.h).
package struct ABIVersion: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The major version: a plugin built for another major cannot load.
    package var major: UInt32
    /// The minor version: additions that keep the major's contract.
    package var minor: UInt32

    /// The version `major.minor`.
    package init(major: UInt32, minor: UInt32) {
        self.major = major
        self.minor = minor
    }

    /// Unpacks `(major << 16) | minor`.
    package init(packed: UInt32) {
        self.init(major: packed >> 16, minor: packed & 0xFFFF)
    }

    /// Parses `"1.0"`.
    package init?(_ text: String) {
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 2, let major = UInt32(parts[0]), let minor = UInt32(parts[1]),
              minor <= 0xFFFF, String(major) == parts[0], String(minor) == parts[1]
        else { return nil }
        self.init(major: major, minor: minor)
    }

    /// `(major << 16) | minor`, as `BERTH_ABI_VERSION` packs it.
    package var packed: UInt32 { (major << 16) | minor }
    /// `major.minor`.
    package var description: String { "\(major).\(minor)" }

    /// Orders by major, then minor.
    package static func < (lhs: ABIVersion, rhs: ABIVersion) -> Bool {
        (lhs.major, lhs.minor) < (rhs.major, rhs.minor)
    }
}
