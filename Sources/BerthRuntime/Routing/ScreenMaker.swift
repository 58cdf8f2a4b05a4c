@_spi(Engine) import BerthCore
/// What the navigator asks of the host when it opens a screen: the generation of a plugin
/// to use now, which may load a lazy or crashed plugin first (`BerthHost`).
@MainActor
protocol GenerationSupplier: AnyObject {
    func generationForUse(of id: String) throws(LoaderError) -> PluginGeneration?
    /// `generationForUse`, with a lazy or crashed plugin loaded off the main actor.
    func generationForUseOffMain(of id: String) async throws(LoaderError) -> PluginGeneration?
}

/// Makes the navigator's screens: resolves a route to its plugin, checks the open-screen
/// limit, finds the generation to use, numbers the router and gives it a module instance
/// (new screens and a reload's reopened ones alike).
@MainActor
final class ScreenMaker {
    private let events: EventLog
    private let activity: ScreenActivity
    private let openScreenLimit: Int
    private let routes: RouteResolver
    private let scopes: ScopeRegistry
    private unowned let generations: any GenerationSupplier
    /// What the screens' plugins call back into (handed to each new screen's handle).
    private weak var pluginHost: (any PluginFacingHost)?
    private var nextRouterID = 1

    init(events: EventLog, activity: ScreenActivity, openScreenLimit: Int, registry: PluginRegistry, scopes: ScopeRegistry,
         generations: any GenerationSupplier, pluginHost: any PluginFacingHost) {
        self.events = events
        self.activity = activity
        self.openScreenLimit = openScreenLimit
        self.routes = RouteResolver(registry: registry)
        self.scopes = scopes
        self.generations = generations
        self.pluginHost = pluginHost
    }

    func takeRouterID() -> Int {
        defer { nextRouterID += 1 }
        return nextRouterID
    }

    /// Creates a detached router with a fresh module instance for `route`.
    func makeScreen(_ route: Route, argument: [UInt8], id: Int? = nil) throws(ScreenError) -> Router {
        let (pluginID, name) = try routes.resolve(route)
        try checkLimit(opening: pluginID, name)
        let generation: PluginGeneration?
        do { generation = try generations.generationForUse(of: pluginID) } catch { throw Self.notLoaded(error) }
        let router = Router(id: id ?? takeRouterID(), kind: .screen, pluginID: pluginID, route: name, argument: argument)
        try makeInstance(on: router, generation: try available(generation, of: pluginID), argument: argument)
        return router
    }

    /// `makeScreen` with the plugin's `create` on its lane, and a lazy or crashed plugin
    /// loaded (its worker started) off the main actor first: the host goes on meanwhile.
    func makeScreenOnLane(_ route: Route, argument: [UInt8], id: Int? = nil, held: HeldRequests) async throws(ScreenError) -> Router {
        let (pluginID, name) = try routes.resolve(route)
        let loaded: PluginGeneration?
        do { loaded = try await generations.generationForUseOffMain(of: pluginID) } catch { throw Self.notLoaded(error) }
        try checkLimit(opening: pluginID, name)
        let generation = try available(loaded, of: pluginID)
        let router = Router(id: id ?? takeRouterID(), kind: .screen, pluginID: pluginID, route: name, argument: argument)
        let module = try await ModuleInstance(onLaneWithID: router.id, route: router.route, generation: generation, argument: argument,
                                              router: router, context: context, held: held)
        finish(module, on: router, generation: generation, reopened: false)
        return router
    }

    /// Refuses a screen past the open-screen limit.
    private func checkLimit(opening pluginID: String, _ name: String) throws(ScreenError) {
        let open = activity.liveScreens
        guard open < openScreenLimit else {
            throw ScreenError(.screenLimit, screen: nil, "cannot open \(pluginID)/\(name): \(open) screens are open, the limit is \(openScreenLimit)")
        }
    }

    private static func notLoaded(_ error: LoaderError) -> ScreenError {
        ScreenError(.pluginNotLoaded, screen: nil, error.message)
    }

    /// The generation to use for `pluginID`; none (not loaded, not loaded on use) is the
    /// screen's error.
    private func available(_ generation: PluginGeneration?, of pluginID: String) throws(ScreenError) -> PluginGeneration {
        guard let generation else { throw ScreenError(.pluginNotLoaded, screen: nil, routes.notLoadedReason(pluginID)) }
        return generation
    }

    private var context: ScreenContext { ScreenContext(activity: activity, scopes: scopes, pluginHost: pluginHost) }

    /// Gives `router` a new module instance of `generation` and its interactor, then reports
    /// it `created` and delivers `didLoad`: for a new screen, and for a reload's reopened
    /// ones, whose kept state `prepare` restores before the interactor exists.
    @discardableResult
    func makeInstance(on router: Router, generation: PluginGeneration, argument: [UInt8] = [], reopened: Bool = false,
                      prepare: (ModuleInstance) -> Void = { _ in }) throws(ScreenError) -> ModuleInstance {
        let module = try ModuleInstance(id: router.id, route: router.route, generation: generation, argument: argument, router: router,
                                        context: context)
        prepare(module)
        finish(module, on: router, generation: generation, reopened: reopened)
        return module
    }

    /// Gives the new instance its interactor, reports it `created` and delivers `didLoad`.
    private func finish(_ module: ModuleInstance, on router: Router, generation: PluginGeneration, reopened: Bool) {
        router.interactor = Interactor(module: module)
        events.emit(.created, .screen(router.id), "\(router.pluginID)/\(router.route) \(reopened ? "recreated" : "created") (generation \(generation.number))")
        module.deliver(.didLoad)
    }
}
