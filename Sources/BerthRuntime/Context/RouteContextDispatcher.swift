@_spi(Engine) import BerthCore
/// Route-context dispatch over the host's router tree: observers on routers, delivery to
/// ancestors nearest first then the sender, and `terminate`'s navigation.
@MainActor
struct RouteContextDispatcher {
    let navigator: Navigator
    let events: EventLog

    // MARK: Observers

    /// Registers the screen of `router` as an observer of `type`; a second registration of
    /// the same type on the same screen is ignored (returns false).
    @discardableResult
    func addScreenObserver(_ type: String, on router: Router) -> Bool {
        guard !router.contextObservers.contains(where: { $0.isScreen && $0.type == type }) else { return false }
        router.contextObservers.append(ContextObserver(type: type, hostHandler: nil))
        events.emit(.event, .screen(router.id), "observes context \(type)")
        return true
    }

    /// Registers a host-side observer of `type` on `router` (for example the embedding app).
    func addHostObserver(_ type: String, on router: Router, _ handler: @escaping (String, [UInt8]) -> Void) {
        router.contextObservers.append(ContextObserver(type: type, hostHandler: handler))
    }

    /// Removes every observer of `type` on `router`; a no-op when there is none.
    func removeObservers(_ type: String, on router: Router) {
        router.contextObservers.removeAll { $0.type == type }
    }

    /// Removes the screen's own observer of `type` (the plugin's `remove(context:)`).
    func removeScreenObserver(_ type: String, on router: Router) {
        router.contextObservers.removeAll { $0.isScreen && $0.type == type }
    }

    /// Who observes what, where, in tree order.
    var observations: [ContextObservation] {
        navigator.openRouters.flatMap { router in
            router.contextObservers.map { observer in
                ContextObservation(screen: router.id, pluginID: router.pluginID, route: router.route, type: observer.type, byHost: !observer.isScreen)
            }
        }
    }

    // MARK: Sending

    /// Dispatches a context from `sender` to matching observers: every ancestor router,
    /// nearest first, then the sender's own router. Navigation does not change.
    /// `onLanes`: each observing screen gets it on its plugin's lane, as the host's own call
    /// (sent during a call on a lane); it then counts as received when it is sent, and a
    /// screen that refuses it says so in an event of its own.
    @discardableResult
    func send(_ type: String, payload: [UInt8], from sender: Router, onLanes: Bool = false) -> ContextDelivery {
        navigator.topLevel {
            let receivers = dispatch(type, payload: payload, from: sender, onLanes: onLanes)
            noteStaysOpen(sender, after: type, receivers: receivers)
            return ContextDelivery(receiverIDs: receivers, closed: [], navigation: .none)
        }
    }

    /// The common mistake: a picker that sends its choice with `context` stays open, and
    /// nothing says why. The first `context` a screen sends that someone received gets a
    /// note naming `terminate`, once per screen.
    private func noteStaysOpen(_ sender: Router, after type: String, receivers: ContextReceivers) {
        guard !receivers.isEmpty, !sender.notedContextKeepsItOpen else { return }
        sender.notedContextKeepsItOpen = true
        events.emit(.event, .screen(sender.id), "note: context \(type) was sent and screen \(sender.id) stays open; terminate(\(type)) sends it and closes the screen")
    }

    /// Dispatches, then completes navigation: pop back to the nearest earlier screen of the
    /// sender's stack observing `type`; else dismiss the sender's presented stack; else go
    /// back one screen; on an empty, non-presented stack, nothing. Every removed screen
    /// goes through the full close sequence.
    /// `onLanes` as for `send`. On lanes, the navigation runs once the deliveries are over
    /// (it is queued first, and waits for them as the sender's next requests do): the
    /// returned delivery names the receivers only.
    @discardableResult
    func terminate(_ type: String, payload: [UInt8], from sender: Router, onLanes: Bool = false) -> ContextDelivery {
        navigator.topLevel {
            let receivers = dispatch(type, payload: payload, from: sender, onLanes: onLanes)
            guard onLanes else { return navigateAfterTerminate(type, from: sender, receivers) }
            navigator.enqueueFirst { [self] in _ = navigateAfterTerminate(type, from: sender, receivers) }
            return ContextDelivery(receiverIDs: receivers, closed: [], navigation: .none)
        }
    }

    /// `terminate`'s navigation, with the close sequence of every removed screen.
    private func navigateAfterTerminate(_ type: String, from sender: Router, _ receivers: ContextReceivers) -> ContextDelivery {
        navigator.topLevel {
            guard sender.module?.isActive == true, let stack = sender.stack, let index = stack.routers.firstIndex(where: { $0 === sender }) else {
                return ContextDelivery(receiverIDs: receivers, closed: [], navigation: .none)
            }
            let before = Set(navigator.openRouters.map(\.id))
            let navigation: TerminateNavigation
            if let anchor = nearestAnchor(for: type, below: index, in: stack) {
                navigator.deactivateDetachAndPop(stack.routers[anchor + 1])
                navigation = .poppedToAnchor
            } else if stack.isPresented, let root = stack.routers.first {
                navigator.deactivateDetachAndDismiss(root)
                navigation = .dismissed
            } else if index > 0 {
                navigator.deactivateDetachAndPop(sender)
                navigation = .back
            } else {
                navigation = .none
            }
            let closed = before.subtracting(navigator.openRouters.map(\.id)).sorted()
            events.emit(.event, .screen(sender.id), "terminate \(type): \(navigation.rawValue), \(closed.count) screen(s) closed")
            return ContextDelivery(receiverIDs: receivers, closed: closed, navigation: navigation)
        }
    }

    /// Whether `terminate(type)` from `sender` would find a receiver: some ancestor or the
    /// sender itself observes the type.
    func canTerminate(_ type: String, from sender: Router) -> Bool {
        walkContextChain(from: sender) { router in router.contextObservers.contains { $0.type == type } }
    }

    // MARK: Internals

    /// Ancestors nearest first, then the sender (the launch router never observes): walked
    /// in place, without building an array, until `body` returns true. Returns whether it did.
    @discardableResult
    private func walkContextChain(from sender: Router, _ body: (Router) -> Bool) -> Bool {
        var current = sender.parent
        while let router = current, router.kind == .screen {
            if body(router) { return true }
            current = router.parent
        }
        return body(sender)
    }

    /// The index of the nearest earlier screen in `stack` (below `index`) that observes
    /// `type`; with two anchors of one type the nearest wins, deterministically.
    private func nearestAnchor(for type: String, below index: Int, in stack: NavigationStack) -> Int? {
        stride(from: index - 1, through: 0, by: -1).first { position in
            stack.routers[position].contextObservers.contains { $0.type == type }
        }
    }

    /// "; did you mean 'com.nu.tags.TagChoice' (observed by screen 1)?" when an open
    /// screen observes a type that differs from `type` as a typo would, else "".
    private func resemblance(to type: String) -> String {
        let observations = observations
        guard let near = Suggestion.closest(to: type, among: observations.map(\.type)),
              let observer = observations.first(where: { $0.type == near }) else { return "" }
        return "; did you mean '\(near)' (observed by screen \(observer.screen))?"
    }

    private func dispatch(_ type: String, payload: [UInt8], from sender: Router, onLanes: Bool) -> ContextReceivers {
        var receivers = ContextReceivers()
        guard let module = sender.module, module.isActive else {
            events.emit(.failed, .screen(sender.id), "context \(type) not sent: the sending screen is \(sender.module?.state.rawValue ?? "released")")
            return receivers
        }
        let key = ContextTypeKey(type)
        var onObserversLanes: [ModuleInstance] = []
        // Started once the delivery is logged: the screens' own lines follow it.
        defer {
            for observing in onObserversLanes {
                navigator.deliverOnLane(to: observing) { held async throws(ScreenError) -> Bool in
                    try await observing.deliverContextOnLane(type, payload: payload, held: held)
                }
            }
        }
        walkContextChain(from: sender) { router in
            for observer in router.contextObservers where observer.key == key {
                if let handler = observer.hostHandler {
                    handler(type, payload)
                    receivers.append(router.id)
                } else if let observing = router.module, observing.isActive, onLanes {
                    onObserversLanes.append(observing)
                    receivers.append(router.id)
                } else if let observing = router.module, observing.isActive {
                    do throws(ScreenError) {
                        try observing.deliverContext(type, payload: payload)
                        receivers.append(router.id)
                    } catch {
                        events.emit(.failed, .screen(router.id), "context \(type): \(error.message)")
                    }
                }
            }
            return false
        }
        if receivers.isEmpty {
            let observed = walkContextChain(from: sender) { $0.contextObservers.contains { $0.type == type } }
            events.emit(.event, .screen(sender.id), observed ? "context \(type) reached no observer (each one refused it)" : "context \(type) has no observer" + resemblance(to: type))
        } else {
            // Formatted only when the log is read: the common path builds no string.
            events.emit(.event, .screen(sender.id), .contextDelivered(type: type, receivers: receivers))
        }
        return receivers
    }
}
