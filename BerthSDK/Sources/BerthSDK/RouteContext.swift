import FoundationEssentials
internal import CBerth

/// A typed value a child flow sends upstream (the seed's `RouteContext`). Across the
/// plugin boundary it travels as its `contextType` name plus a JSON payload, so any
/// plugin — Swift or C — that agrees on the name and the JSON can receive it.
public protocol RouteContext: Codable, Hashable, Sendable {
    /// The name observers match on, reverse-DNS (`com.example.users.UserSelection`).
    static var contextType: String { get }
}

extension ScreenContext {
    /// Observes `T` on this screen's router: `handler` runs when a descendant (or this
    /// screen) sends one. A second registration of the same type is ignored. The host
    /// drops the observer when this screen is closed.
    public func addContext<T: RouteContext>(_ type: T.Type, _ handler: @escaping (T) -> Void) throws {
        let runtime = PluginRuntime.shared
        guard let observe = runtime.hostFunction(\.context_observe) else { throw BerthError.hostLacks("context_observe") }
        guard runtime.contextHandlers[handle, default: [:]][T.contextType] == nil else { return }
        try runtime.check { error in observe(handle, T.contextType, error) }
        runtime.contextHandlers[handle, default: [:]][T.contextType] = { payload in handler(try T.decode(payload)) }
    }

    /// Stops observing `T`; a no-op when not observed.
    public func removeContext<T: RouteContext>(_ type: T.Type) throws {
        let runtime = PluginRuntime.shared
        runtime.contextHandlers[handle]?[T.contextType] = nil
        // A `.routerContext` in the last render still wants the type: keep it registered.
        guard runtime.viewContextHandlers[handle]?[T.contextType] == nil else { return }
        guard let unobserve = runtime.hostFunction(\.context_unobserve) else { throw BerthError.hostLacks("context_unobserve") }
        try runtime.check { error in unobserve(handle, T.contextType, error) }
    }

    /// Sends `value` to the observers of its type up the hierarchy; navigation does not
    /// change. Delivered when this call into the plugin returns.
    public func context<T: RouteContext>(_ value: T) throws {
        try send(value, mode: Int32(BERTH_CONTEXT_DISPATCH))
    }

    /// Sends `value`, then completes the flow: back to the nearest earlier screen of this
    /// stack that observes the type, else closes this modal, else goes back one screen.
    public func terminate<T: RouteContext>(_ value: T) throws {
        try send(value, mode: Int32(BERTH_CONTEXT_TERMINATE))
    }

    /// Whether `terminate` with a `T` would find a receiver.
    public func canTerminate<T: RouteContext>(_ type: T.Type) -> Bool {
        guard let can = PluginRuntime.shared.hostFunction(\.context_can_terminate) else { return false }
        return can(handle, T.contextType) != 0
    }

    private func send<T: RouteContext>(_ value: T, mode: Int32) throws {
        let runtime = PluginRuntime.shared
        guard let send = runtime.hostFunction(\.context_send) else { throw BerthError.hostLacks("context_send") }
        let payload = Array(try StableJSON.encoder.encode(value))
        try runtime.check { error in
            payload.withUnsafeBufferPointer { buffer in
                send(handle, T.contextType, berth_bytes(data: buffer.baseAddress, length: UInt64(buffer.count)), mode, error)
            }
        }
    }
}
