@_spi(Engine) import BerthCore

/// A place in the host-owned router tree. The launch router is the root (it has no
/// screen); every other router holds one open screen: an interactor and its module
/// instance. Routers attach and detach children; the host's navigation container decides
/// what is visible.
/// `@_spi(Engine) public` where the benchmarks (a package of their own, which cannot see
/// `package` declarations) use it, else `package`: not part of the embedding API, which
/// shows screens and plugins as values (Docs/embedding.md).
@MainActor
@_spi(Engine) public final class Router {
    /// Whether a router is the tree's root or holds a screen.
    package enum Kind: Sendable {
        /// The root, retained by the host for its whole life.
        case launch
        /// A screen pushed on a stack, or the root of a presented stack.
        case screen
    }

    /// Router id (the screen's number in host commands). Never reused in a host process.
    @_spi(Engine) public let id: Int
    /// The launch router or a screen's router.
    package let kind: Kind
    /// The plugin and route of the screen (empty for the launch router).
    package let pluginID: String
    /// The route's name within its plugin.
    package let route: String
    /// The screen's route with its plugin named (`PLUGIN.ID/ROUTE`): push it to open the
    /// same screen again.
    package var qualifiedRoute: Route { Route(plugin: pluginID, name: route) }
    /// The screen's interactor; replaced in place when its plugin reloads. The instance it
    /// lets go of forgets this router. Unchecked exclusivity, as `parent`: read at every
    /// level a context dispatch walks (a tenth of it was this dynamic check), and only ever
    /// assigned whole.
    @exclusivity(unchecked) package internal(set) var interactor: Interactor? {
        didSet { if oldValue !== interactor { oldValue?.module.routerLetGo() } }
    }
    /// The router this one is attached under. `unowned`, not `weak`: a weak reference gives
    /// its target a side table, and every retain and release of a router with one takes
    /// the slow path (a third of a context dispatch, which walks up the tree). The link
    /// never outlives its target: detach clears it, and so do the parent's release and its
    /// deinit (a tree dropped without release), each for the parent's children. Unchecked
    /// exclusivity, as `contextObservers`: main-actor state read on every step of a context
    /// dispatch, and only ever assigned whole, never modified in place across a call.
    @exclusivity(unchecked) package private(set) unowned(safe) var parent: Router?
    /// The routers attached under this one, in attach order (pushed screens, presented roots).
    package private(set) var children: [Router] = []
    /// The stack holding this router (nil for the launch router).
    weak var stack: NavigationStack?
    /// The modal stack presented from this router, if any. Unchecked exclusivity, as
    /// `parent`: read for every screen of the launch stack when an operation ends (finding
    /// the visible screen) and only ever assigned whole.
    @exclusivity(unchecked) var presentedStack: NavigationStack?
    /// Runs once when this router is released, whichever path closed it.
    var onRelease: (() -> Void)?
    /// True once the screen is closed and released; a released router is not in the tree.
    package private(set) var isReleased = false
    /// Observers of this screen's delegate actions.
    var delegateObservers: [DelegateObserver] = []
    /// Route-context observers registered on this router, in registration order. Unchecked
    /// exclusivity: read at every level a context dispatch walks (its dynamic check and
    /// `parent`'s were a fifth of a dispatch's instructions), and main-actor state whose
    /// in-place changes (append, removeAll) call nothing that could reach this router again.
    @exclusivity(unchecked) var contextObservers: [ContextObserver] = []
    /// Whether the note that `context` leaves this screen open was emitted (once a screen).
    var notedContextKeepsItOpen = false

    /// The argument the screen was opened with: a reload's fresh instance is created with it too.
    let argument: [UInt8]

    init(id: Int, kind: Kind, pluginID: String = "", route: String = "", argument: [UInt8] = []) {
        self.id = id
        self.kind = kind
        self.pluginID = pluginID
        self.route = route
        self.argument = argument
    }

    isolated deinit {
        for child in children { child.parent = nil }
        interactor?.module.routerLetGo()
    }

    /// True when this router is the root of a stack presented by `presenter`.
    package func isPresented(from presenter: Router) -> Bool {
        presenter.presentedStack != nil && presenter.presentedStack === stack && stack?.routers.first === self
    }

    /// The module instance of the screen, if any.
    package var module: ModuleInstance? { interactor?.module }

    /// Attaches `child`. Idempotent by identity: a second attach of the same router does
    /// nothing and returns false.
    @discardableResult
    func attachChild(_ child: Router) -> Bool {
        guard !children.contains(where: { $0 === child }) else { return false }
        children.append(child)
        child.parent = self
        return true
    }

    /// Detaches `child` after deactivating its whole subtree, deepest first. Detaching a
    /// router that is not attached is a no-op.
    func detachChild(_ child: Router) {
        guard let index = children.firstIndex(where: { $0 === child }) else { return }
        for router in child.subtreeDeepestFirst() {
            router.interactor?.deactivate()
        }
        children.remove(at: index)
        child.parent = nil
    }

    /// This router and its descendants, deepest first (reverse pre-order).
    func subtreeDeepestFirst() -> [Router] {
        var order: [Router] = []
        func visit(_ router: Router) {
            order.append(router)
            for child in router.children { visit(child) }
        }
        visit(self)
        return order.reversed()
    }

    /// Releases this router alone: destroys its module instance, runs `onRelease` once,
    /// drops observers. Idempotent.
    func release() {
        guard !isReleased else { return }
        isReleased = true
        if let interactor {
            try? interactor.release()
        }
        interactor = nil
        delegateObservers.removeAll()
        contextObservers.removeAll()
        for child in children { child.parent = nil }
        children.removeAll()
        presentedStack = nil
        let callback = onRelease
        onRelease = nil
        callback?()
    }
}

/// Who hears a screen's delegate actions: another screen (delivered to its plugin) or a
/// host-side closure. A screen observer is held strongly (a weak reference would give the
/// router a side table and slow every retain of it): a released observer is skipped and
/// dropped at the next delivery, and the list goes when the observed screen is released.
@MainActor
struct DelegateObserver {
    let screen: Router?
    let hostHandler: ((String, [UInt8]) -> Void)?

    static func screen(_ router: Router) -> DelegateObserver {
        DelegateObserver(screen: router, hostHandler: nil)
    }

    static func host(_ handler: @escaping (String, [UInt8]) -> Void) -> DelegateObserver {
        DelegateObserver(screen: nil, hostHandler: handler)
    }
}

/// An observer of one route-context type on a router: the router's own screen (delivered
/// through its plugin's `context_received`) or a host-side handler.
@MainActor
struct ContextObserver {
    let type: String
    /// `type` as a dispatch compares it, made once at registration.
    let key: ContextTypeKey
    /// Set for a host-side observer; nil means the router's own screen observes.
    let hostHandler: ((String, [UInt8]) -> Void)?

    init(type: String, hostHandler: ((String, [UInt8]) -> Void)?) {
        self.type = type
        key = ContextTypeKey(type)
        self.hostHandler = hostHandler
    }

    var isScreen: Bool { hostHandler == nil }
}

/// A context type name with its length when it is all ASCII, so that a dispatch, which
/// compares the sent type with the observers' at every level it walks, tells two ASCII names
/// of different lengths apart without a string comparison (the usual case: names such as
/// `com.example.users.UserSelection` and `bench.Selection`, one a large string and one a
/// small one, whose `==` takes the standard library's slow path). Two ASCII names are equal
/// exactly when their bytes are; a name with other characters compares as a `String`
/// (canonical equivalence) whatever its length.
struct ContextTypeKey: Equatable, Sendable {
    let name: String
    /// The UTF-8 length of an all-ASCII name; -1 otherwise.
    let asciiLength: Int

    init(_ name: String) {
        self.name = name
        var bytes = name
        // Over contiguous bytes: iterating a small string's `utf8` costs some 30 instructions
        // a byte, and every dispatch makes the sent type's key.
        asciiLength = bytes.withUTF8 { utf8 in utf8.allSatisfy { $0 < 0x80 } ? utf8.count : -1 }
    }

    static func == (lhs: ContextTypeKey, rhs: ContextTypeKey) -> Bool {
        if lhs.asciiLength != rhs.asciiLength && lhs.asciiLength >= 0 && rhs.asciiLength >= 0 { return false }
        return lhs.name == rhs.name
    }
}
