@_spi(Engine) import BerthCore
internal import CBerth

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
