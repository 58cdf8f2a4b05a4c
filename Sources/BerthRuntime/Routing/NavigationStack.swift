@_spi(Engine) import BerthCore
/// A navigation stack in the host's navigation container: the launch stack, or the stack
/// of a presented (modal) flow. Screens are pushed and popped at the top; a modal is
/// presented from the top screen of a stack and covers everything below it.
@MainActor
final class NavigationStack {
    let id: Int
    /// The router that presented this stack; nil for the launch stack.
    private(set) weak var presenter: Router?
    /// Unchecked exclusivity: read whenever an operation ends (finding the visible screen);
    /// main-actor state whose in-place changes (append, remove) call out to nothing.
    @exclusivity(unchecked) private(set) var routers: [Router] = []

    init(id: Int, presenter: Router?) {
        self.id = id
        self.presenter = presenter
    }

    var top: Router? { routers.last }
    var isPresented: Bool { presenter != nil }

    func contains(_ router: Router) -> Bool {
        routers.contains { $0 === router }
    }

    func push(_ router: Router) {
        routers.append(router)
    }

    /// Removes `router` and every router above it; returns them bottom to top.
    func removeFrom(_ router: Router) -> [Router] {
        guard let index = routers.firstIndex(where: { $0 === router }) else { return [] }
        let removed = Array(routers[index...])
        routers.removeSubrange(index...)
        return removed
    }

    func removeAll() -> [Router] {
        defer { routers.removeAll() }
        return routers
    }
}
