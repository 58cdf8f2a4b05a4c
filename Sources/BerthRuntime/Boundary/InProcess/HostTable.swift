@_spi(Engine) import BerthCore
internal import CBerth
import Logging

/// What a `berth_plugin_handle *` points to: the identity of one loaded generation, safe to
/// use from any thread (a plugin may log from a worker thread).
final class PluginContext: Sendable {
    let pluginID: String
    let generation: Int
    let logger: Logger
    /// The host, for plugin-wide services (registration, sessions); used on the main actor.
    weak let host: (any PluginFacingHost)?
    /// What the generation's manifest grants.
    let grant: CapabilityGrant
    /// How long and how many of its log lines the host prints.
    let logBudget: LogBudget
    /// The plugin's lane, where its contracts answer calls (nil for a trial load).
    let lane: LaneState?

    init(pluginID: String, generation: Int, logger: Logger, host: (any PluginFacingHost)?, grant: CapabilityGrant, limits: PluginLimits = PluginLimits(),
         lane: LaneState? = nil) {
        self.pluginID = pluginID
        self.lane = lane
        logBudget = LogBudget(limits: limits)
        self.grant = grant
        self.generation = generation
        self.host = host
        var logger = logger
        logger[metadataKey: "plugin"] = "\(pluginID)#\(generation)"
        self.logger = logger
    }

    /// The opaque handle given to the plugin. Retained until `releaseHandle`.
    func retainedHandle() -> OpaquePointer {
        OpaquePointer(Unmanaged.passRetained(self).toOpaque())
    }

    static func from(handle: OpaquePointer?) -> PluginContext? {
        guard let handle else { return nil }
        return Unmanaged<PluginContext>.fromOpaque(UnsafeRawPointer(handle)).takeUnretainedValue()
    }

    static func releaseHandle(_ handle: OpaquePointer) {
        Unmanaged<PluginContext>.fromOpaque(UnsafeRawPointer(handle)).release()
    }
}

extension HostTable {
    /// The table for plugins loaded into the host's own process: its first use makes the
    /// in-process transport the process's (`HostAdapter.use`).
    static var inProcess: UnsafePointer<berth_host_v1> { inProcessTable }

    // Written once (Swift's lazy global initialization), then only read.
    nonisolated(unsafe) private static let inProcessTable: UnsafePointer<berth_host_v1> = {
        HostAdapter.use(InProcessTransport())
        return pointer
    }()

    /// A `BERTH_LOG_*` level as swift-log's.
    static func logLevel(_ level: Int32) -> Logger.Level {
        switch Int(level) {
        case Int(BERTH_LOG_TRACE): .trace
        case Int(BERTH_LOG_DEBUG): .debug
        case Int(BERTH_LOG_INFO): .info
        case Int(BERTH_LOG_NOTICE): .notice
        case Int(BERTH_LOG_WARNING): .warning
        default: .error
        }
    }
}

