@_spi(Engine) import BerthCore
/// Route context: typed values a child flow sends upstream. A context type is a name
/// (`com.example.users.UserSelection`) and a payload of bytes; the host matches names and
/// never looks inside the payload.
extension BerthHost {
    /// Who observes what, where, in tree order.
    package var contextObservations: [ContextObservation] { routeContext.observations }

    var routeContext: RouteContextDispatcher { RouteContextDispatcher(navigator: navigator, events: eventLog) }

    /// Registers a host-side observer of `type` on `router` (for example the embedding app).
    @_spi(Engine) public func addContextObserver(_ type: String, on router: Router, _ handler: @escaping (String, [UInt8]) -> Void) {
        routeContext.addHostObserver(type, on: router, handler)
    }

    /// Removes every observer of `type` on `router`; a no-op when there is none.
    package func removeContextObservers(_ type: String, on router: Router) {
        routeContext.removeObservers(type, on: router)
    }

    /// Dispatches a context from `sender` to its ancestors' observers, nearest first, then
    /// the sender's own; navigation does not change.
    @discardableResult
    @_spi(Engine) public func sendContext(_ type: String, payload: [UInt8], from sender: Router) -> ContextDelivery {
        routeContext.send(type, payload: payload, from: sender)
    }

    /// A context a plugin sent: during a call on a lane (`onLanes`), each observing screen
    /// gets it on its own plugin's lane.
    func sendContext(_ type: String, payload: [UInt8], from sender: Router, terminating: Bool, onLanes: Bool) {
        if terminating {
            routeContext.terminate(type, payload: payload, from: sender, onLanes: onLanes)
        } else {
            routeContext.send(type, payload: payload, from: sender, onLanes: onLanes)
        }
    }

    /// Dispatches, then pops to the nearest anchor, else dismisses, else goes back one.
    @discardableResult
    @_spi(Engine) public func terminate(_ type: String, payload: [UInt8], from sender: Router) -> ContextDelivery {
        routeContext.terminate(type, payload: payload, from: sender)
    }

    /// Whether `terminate(type)` from `sender` would find an observer.
    package func canTerminate(_ type: String, from sender: Router) -> Bool {
        routeContext.canTerminate(type, from: sender)
    }
}
