internal import CBerth

/// The plugin → host half of the seam: `berth_host_v1` in Swift types. The in-process
/// `HostTable` turns C arguments into these calls; a worker's requests arrive as the
/// same calls. Every function here runs on the host's main actor, during a call the host
/// made into the plugin (berth.h's thread rule, checked before the call gets here).
@MainActor
package protocol HostCallbacks {
    func navigate(_ screen: ScreenHandle, _ request: NavigationRequest, argument: [UInt8]) -> Result<Int?, HostRefusal>
    func observeDelegate(_ screen: ScreenHandle, child: Int) -> Result<Void, HostRefusal>
    func sendDelegate(_ screen: ScreenHandle, action: String, payload: [UInt8]) -> Result<Void, HostRefusal>
    func contextObserve(_ screen: ScreenHandle, type: String) -> Result<Void, HostRefusal>
    func contextUnobserve(_ screen: ScreenHandle, type: String)
    func contextSend(_ screen: ScreenHandle, type: String, payload: [UInt8], terminate: Bool) -> Result<Void, HostRefusal>
    func contextCanTerminate(_ screen: ScreenHandle, type: String) -> Bool
    /// nil: no such slot (or its fingerprint differs).
    func stateRead(_ screen: ScreenHandle, identity: String, index: UInt32, fingerprint: UInt64) -> Result<[UInt8]?, HostRefusal>
    func stateWrite(_ screen: ScreenHandle, identity: String, index: UInt32, fingerprint: UInt64, value: [UInt8]) -> Result<Void, HostRefusal>
    /// nil: nothing persisted under `key`.
    func persistRead(_ screen: ScreenHandle, key: String) -> Result<[UInt8]?, HostRefusal>
    func persistWrite(_ screen: ScreenHandle, key: String, value: [UInt8]) -> Result<Void, HostRefusal>
    /// A managed task of `screen` posts an action to it (runs later, at top level).
    func taskPost(_ screen: ScreenHandle, action: String, payload: [UInt8])
}

/// A navigation a plugin asks for.
package enum NavigationRequest: Sendable, Equatable {
    case push(route: Route)
    case present(route: Route)
    case pop, dismiss, popToRoot

    /// A `BERTH_NAVIGATE_*` kind and its route text (push and present only), refused with
    /// `BERTH_ERR_INVALID_ARGUMENT` for an unknown kind or a missing or malformed route.
    init(kind: Int32, route: String?) throws(HostRefusal) {
        func parsed() throws(HostRefusal) -> Route {
            guard let route, !route.isEmpty else { throw HostRefusal(.invalidArgument, "navigate: a route is required to push or present") }
            do {
                return try Route(parsing: route)
            } catch {
                throw HostRefusal(.invalidArgument, "navigate: \(error.message)")
            }
        }
        switch Int(kind) {
        case Int(BERTH_NAVIGATE_PUSH): self = .push(route: try parsed())
        case Int(BERTH_NAVIGATE_PRESENT): self = .present(route: try parsed())
        case Int(BERTH_NAVIGATE_POP): self = .pop
        case Int(BERTH_NAVIGATE_DISMISS): self = .dismiss
        case Int(BERTH_NAVIGATE_POP_TO_ROOT): self = .popToRoot
        default: throw HostRefusal(.invalidArgument, "navigate: unknown kind \(kind)")
        }
    }
}

/// The host's refusal of a plugin's call: a berth.h status and a one-line reason.
package struct HostRefusal: Error, Sendable, Equatable {
    package enum Code: Int32, Sendable {
        case invalidArgument = 1, notFound = 2, unsupported = 3, state = 4, failed = 5, cancelled = 6, decode = 7, denied = 8
    }

    package var code: Code
    package var message: String

    package init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }
}
