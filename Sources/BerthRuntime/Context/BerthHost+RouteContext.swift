/// Route context: typed values a child flow sends upstream. A context type is a name
/// (`com.example.users.UserSelection`) and a payload of bytes; the host matches names and
/// never looks inside the payload.
extension BerthHost {
    /// What a `context` or `terminate` did.
    public struct ContextDelivery: Sendable, Equatable {
        /// Observers that received the value (screens and host handlers), in order.
        public var receivers: [Int] {
            get { Array(receiverIDs) }
            set { receiverIDs = ContextReceivers(newValue) }
        }
        /// The same, kept inline: a dispatch to a few observers allocates nothing.
        var receiverIDs: ContextReceivers
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

    /// One route-context observer: the screen it sits on and the type it observes.
    public struct ContextObservation: Sendable, Equatable {
        /// The screen (router id) the observer sits on.
        public var screen: Int
        /// The plugin of that screen.
        public var pluginID: String
        /// The route of that screen.
        public var route: String
        /// The route-context type it observes.
        public var type: String
        /// Registered by the host (for example the CLI) rather than by the screen's plugin.
        public var byHost: Bool
    }

    /// Who observes what, where, in tree order.
    public var contextObservations: [ContextObservation] { routeContext.observations }

    var routeContext: RouteContextDispatcher { RouteContextDispatcher(navigator: navigator, events: eventLog) }

    /// Registers a host-side observer of `type` on `router` (for example the embedding app).
    public func addContextObserver(_ type: String, on router: Router, _ handler: @escaping (String, [UInt8]) -> Void) {
        routeContext.addHostObserver(type, on: router, handler)
    }

    /// Removes every observer of `type` on `router`; a no-op when there is none.
    public func removeContextObservers(_ type: String, on router: Router) {
        routeContext.removeObservers(type, on: router)
    }

    /// Dispatches a context from `sender` to its ancestors' observers, nearest first, then
    /// the sender's own; navigation does not change.
    @discardableResult
    public func sendContext(_ type: String, payload: [UInt8], from sender: Router) -> ContextDelivery {
        routeContext.send(type, payload: payload, from: sender)
    }

    /// Dispatches, then pops to the nearest anchor, else dismisses, else goes back one.
    @discardableResult
    public func terminate(_ type: String, payload: [UInt8], from sender: Router) -> ContextDelivery {
        routeContext.terminate(type, payload: payload, from: sender)
    }

    /// Whether `terminate(type)` from `sender` would find an observer.
    public func canTerminate(_ type: String, from sender: Router) -> Bool {
        routeContext.canTerminate(type, from: sender)
    }
}
