internal import CBerth

/// A screen's line to the host: logging now; navigation, context, state, scopes and tasks
/// as the host grows them. Every call fails with the host's message as a thrown
/// `BerthError` when the host refuses or does not provide a service.
public struct ScreenContext: @unchecked Sendable {
    // @unchecked: the handle is an opaque token the host owns; it is only passed back to
    // the host, which documents which thread may use it.
    let handle: OpaquePointer?

    /// The route this screen was opened for.
    public let route: String
    /// Bytes the opener passed (empty when none).
    public let argument: [UInt8]

    init(handle: OpaquePointer?, route: String, argument: [UInt8]) {
        self.handle = handle
        self.route = route
        self.argument = argument
    }

    /// Writes a line to the host's log, attributed to this plugin.
    public func log(_ message: String, level: LogLevel = .info) {
        PluginRuntime.shared.log(message, level: level)
    }
}

/// Log levels, as berth.h numbers them.
public enum LogLevel: Int32, Sendable {
    case trace = 0, debug, info, notice, warning, error
}
