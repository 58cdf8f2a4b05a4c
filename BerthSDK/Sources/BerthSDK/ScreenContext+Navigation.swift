internal import CBerth

/// The number of an open screen (its router id in the host).
public typealias ScreenID = UInt64

extension ScreenContext {
    /// Pushes `route` on this screen's stack ("com.example.other/route" for another
    /// plugin's). The push happens when this call into the plugin returns; the id it will
    /// have is returned now, to observe its delegate actions.
    @discardableResult
    public func push(_ route: String, argument: [UInt8] = []) throws -> ScreenID {
        try navigate(Int32(BERTH_NAVIGATE_PUSH), route: route, argument: argument)
    }

    /// Presents `route` modally from this screen, with a stack of its own.
    @discardableResult
    public func present(_ route: String, argument: [UInt8] = []) throws -> ScreenID {
        try navigate(Int32(BERTH_NAVIGATE_PRESENT), route: route, argument: argument)
    }

    /// Pops this screen (and anything above it) off its stack.
    public func pop() throws {
        _ = try navigate(Int32(BERTH_NAVIGATE_POP), route: nil, argument: [])
    }

    /// Dismisses the modal flow this screen is in.
    public func dismiss() throws {
        _ = try navigate(Int32(BERTH_NAVIGATE_DISMISS), route: nil, argument: [])
    }

    /// Pops this screen's stack back to its root.
    public func popToRoot() throws {
        _ = try navigate(Int32(BERTH_NAVIGATE_POP_TO_ROOT), route: nil, argument: [])
    }

    /// Sends an action on this screen's delegate channel, to whoever observes it.
    public func sendDelegate(_ action: String, payload: [UInt8] = []) throws {
        let runtime = PluginRuntime.shared
        guard let send = runtime.hostFunction(\.send_delegate) else { throw BerthError.hostLacks("send_delegate") }
        try runtime.check { error in
            payload.withUnsafeBufferPointer { buffer in
                send(handle, action, berth_bytes(data: buffer.baseAddress, length: UInt64(buffer.count)), error)
            }
        }
    }

    /// Observes the delegate actions of child screen `child` (an id from `push`/`present`);
    /// they arrive in `Screen.delegate(from:action:payload:)`.
    public func observeDelegate(of child: ScreenID) throws {
        let runtime = PluginRuntime.shared
        guard let observe = runtime.hostFunction(\.observe_delegate) else { throw BerthError.hostLacks("observe_delegate") }
        try runtime.check { error in observe(handle, child, error) }
    }

    private func navigate(_ kind: Int32, route: String?, argument: [UInt8]) throws -> ScreenID {
        let runtime = PluginRuntime.shared
        guard let navigate = runtime.hostFunction(\.navigate) else { throw BerthError.hostLacks("navigate") }
        var id: UInt64 = 0
        try runtime.check { error in
            argument.withUnsafeBufferPointer { buffer in
                navigate(handle, kind, route, berth_bytes(data: buffer.baseAddress, length: UInt64(buffer.count)), &id, error)
            }
        }
        return id
    }
}

extension BerthError {
    static func hostLacks(_ function: String) -> BerthError {
        BerthError(code: .unsupported, message: "the host does not provide \(function)")
    }
}
