/// Route context: typed values a child flow sends upstream. A context type is a name
/// (`com.example.users.UserSelection`) and a payload of bytes; the host matches names and
/// never looks inside the payload.
extension BerthHost {
    /// What a `context` or `terminate` did.
    public struct ContextDelivery: Sendable, Equatable {
        /// Observers that received the value (screens and host handlers), in order.
        public var receivers: [Int]
        /// Screens removed by `terminate`'s navigation.
        public var closed: [Int]
        /// Which rule `terminate` applied.
        public var navigation: TerminateNavigation
    }

    /// The navigation step of `terminate`.
    public enum TerminateNavigation: String, Sendable, Equatable {
        /// `context` only, or terminate on an empty, non-presented stack.
        case none
        /// Popped back to the nearest earlier screen of the stack observing the type.
        case poppedToAnchor
        /// Closed the presented stack the sender is in.
        case dismissed
        /// Went back one screen.
        case back
    }

    // MARK: Observers

    /// Registers the screen of `router` as an observer of `type`; a second registration of
    /// the same type on the same screen is ignored (returns false).
    @discardableResult
    func addScreenContextObserver(_ type: String, on router: Router) -> Bool {
        guard !router.contextObservers.contains(where: { $0.isScreen && $0.type == type }) else { return false }
        router.contextObservers.append(ContextObserver(type: type, hostHandler: nil))
        emit(.event, "screen \(router.id)", "observes context \(type)")
        return true
    }

    /// Registers a host-side observer of `type` on `router` (for example the embedding app).
    public func addContextObserver(_ type: String, on router: Router, _ handler: @escaping (String, [UInt8]) -> Void) {
        router.contextObservers.append(ContextObserver(type: type, hostHandler: handler))
    }

    /// Removes every observer of `type` on `router`; a no-op when there is none.
    public func removeContextObservers(_ type: String, on router: Router) {
        router.contextObservers.removeAll { $0.type == type }
    }

    /// Removes the screen's own observer of `type` (the plugin's `remove(context:)`).
    func removeScreenContextObserver(_ type: String, on router: Router) {
        router.contextObservers.removeAll { $0.isScreen && $0.type == type }
    }

    /// One route-context observer: the screen it sits on and the type it observes.
    public struct ContextObservation: Sendable, Equatable {
        public var screen: Int
        public var pluginID: String
        public var route: String
        public var type: String
        /// Registered by the host (for example the CLI) rather than by the screen's plugin.
        public var byHost: Bool
    }

    /// Who observes what, where, in tree order.
    public var contextObservations: [ContextObservation] {
        openRouters.flatMap { router in
            router.contextObservers.map { observer in
                ContextObservation(screen: router.id, pluginID: router.pluginID, route: router.route, type: observer.type, byHost: !observer.isScreen)
            }
        }
    }

    // MARK: Sending

    /// Dispatches a context from `sender` to matching observers: every ancestor router,
    /// nearest first, then the sender's own router. Navigation does not change.
    @discardableResult
    public func sendContext(_ type: String, payload: [UInt8], from sender: Router) -> ContextDelivery {
        topLevel {
            ContextDelivery(receivers: dispatchContext(type, payload: payload, from: sender), closed: [], navigation: .none)
        }
    }

    /// Dispatches, then completes navigation: pop back to the nearest earlier screen of the
    /// sender's stack observing `type`; else dismiss the sender's presented stack; else go
    /// back one screen; on an empty, non-presented stack, nothing. Every removed screen
    /// goes through the full close sequence.
    @discardableResult
    public func terminate(_ type: String, payload: [UInt8], from sender: Router) -> ContextDelivery {
        topLevel {
            let receivers = dispatchContext(type, payload: payload, from: sender)
            guard sender.module?.isActive == true, let stack = sender.stack, let index = stack.routers.firstIndex(where: { $0 === sender }) else {
                return ContextDelivery(receivers: receivers, closed: [], navigation: .none)
            }
            let before = Set(openRouters.map(\.id))
            let navigation: TerminateNavigation
            if let anchor = nearestAnchor(for: type, below: index, in: stack) {
                deactivateDetachAndPop(stack.routers[anchor + 1])
                navigation = .poppedToAnchor
            } else if stack.isPresented, let root = stack.routers.first {
                deactivateDetachAndDismiss(root)
                navigation = .dismissed
            } else if index > 0 {
                deactivateDetachAndPop(sender)
                navigation = .back
            } else {
                navigation = .none
            }
            let closed = before.subtracting(openRouters.map(\.id)).sorted()
            emit(.event, "screen \(sender.id)", "terminate \(type): \(navigation.rawValue), \(closed.count) screen(s) closed")
            return ContextDelivery(receivers: receivers, closed: closed, navigation: navigation)
        }
    }

    /// Whether `terminate(type)` from `sender` would find a receiver: some ancestor or the
    /// sender itself observes the type.
    public func canTerminate(_ type: String, from sender: Router) -> Bool {
        contextChain(from: sender).contains { router in router.contextObservers.contains { $0.type == type } }
    }

    // MARK: Internals

    /// Ancestors nearest first, then the sender (the launch router never observes).
    private func contextChain(from sender: Router) -> [Router] {
        var chain: [Router] = []
        var current = sender.parent
        while let router = current, router.kind == .screen {
            chain.append(router)
            current = router.parent
        }
        chain.append(sender)
        return chain
    }

    /// The index of the nearest earlier screen in `stack` (below `index`) that observes
    /// `type`; with two anchors of one type the nearest wins, deterministically.
    private func nearestAnchor(for type: String, below index: Int, in stack: NavigationStack) -> Int? {
        stride(from: index - 1, through: 0, by: -1).first { position in
            stack.routers[position].contextObservers.contains { $0.type == type }
        }
    }

    private func dispatchContext(_ type: String, payload: [UInt8], from sender: Router) -> [Int] {
        guard let module = sender.module, module.isActive else {
            emit(.failed, "screen \(sender.id)", "context \(type) not sent: the sending screen is \(sender.module?.state.rawValue ?? "released")")
            return []
        }
        var receivers: [Int] = []
        for router in contextChain(from: sender) {
            for observer in router.contextObservers where observer.type == type {
                if let handler = observer.hostHandler {
                    handler(type, payload)
                    receivers.append(router.id)
                } else if let observing = router.module, observing.isActive {
                    do {
                        try observing.deliverContext(type, payload: payload)
                        receivers.append(router.id)
                    } catch {
                        emit(.failed, "screen \(router.id)", "context \(type): \(error.message)")
                    }
                }
            }
        }
        if receivers.isEmpty {
            let observed = contextChain(from: sender).contains { $0.contextObservers.contains { $0.type == type } }
            emit(.event, "screen \(sender.id)", observed ? "context \(type) reached no observer (each one refused it)" : "context \(type) has no observer")
        } else {
            emit(.event, "screen \(sender.id)", "context \(type) → screen(s) \(receivers.map(String.init).joined(separator: ", "))")
        }
        return receivers
    }
}
