@_spi(Engine) import BerthCore
/// The host as values: what an application reads to draw, and the sequence that tells it
/// when to read again. Nothing here hands out the host's own objects.
extension BerthHost {
    /// Every open screen, in tree order (a screen before the screens above it).
    public var screens: [ScreenSnapshot] { openRouters.map(snapshot) }

    /// The open screen numbered `id`, as it is now; nil when none is open.
    public func screen(_ id: Int) -> ScreenSnapshot? {
        router(id).map(snapshot)
    }

    /// The screen the person sees: the top of the top-most presented stack, else of the
    /// launch stack; nil when nothing is open.
    public var visibleScreen: ScreenSnapshot? { visibleRouter.map(snapshot) }

    /// The screens from the launch stack's root up to the visible one, each above the one it
    /// was pushed on or presented from: what a front end draws (a presented screen over its
    /// backdrop). Empty when nothing is open.
    public var visibleScreens: [ScreenSnapshot] {
        var chain: [Router] = []
        var current = visibleRouter
        while let router = current, router.kind == .screen {
            chain.append(router)
            current = router.parent
        }
        return chain.reversed().map(snapshot)
    }

    /// Every plugin the host knows, by id; `measuringUse` reads each worker's memory,
    /// threads and processor time from the kernel (a few file reads a worker).
    public func pluginSnapshots(measuringUse: Bool = false) -> [PluginSnapshot] {
        plugins.keys.sorted().compactMap { pluginSnapshot($0, measuringUse: measuringUse) }
    }

    /// The plugin `id`, as it is now; nil when the host does not know it.
    public func pluginSnapshot(_ id: String, measuringUse: Bool = false) -> PluginSnapshot? {
        plugins[id].map { PluginSnapshot($0, isolation: configuration.isolation, measuringUse: measuringUse) }
    }

    /// The actions screen `id` declares (empty when it declares none or is not open).
    public func declaredActions(screen id: Int) -> [DeclaredAction] {
        router(id).map(declaredActions(of:)) ?? []
    }

    /// Opens `route` as `open` does, with the plugin's `create` on its lane, and returns the
    /// new screen as it is once opened.
    @discardableResult
    public func openScreen(_ route: Route, argument: [UInt8] = [], presented: Bool = false) async throws(ScreenError) -> ScreenSnapshot {
        snapshot(try await open(route, argument: argument, presented: presented))
    }

    /// Closes screen `id`: dismisses it when it is the root of a presented stack, else pops it
    /// and every screen above it, each through the close sequence.
    public func closeScreen(_ id: Int) throws(ScreenError) {
        guard let router = router(id) else { throw ScreenError(.noSuchScreen, screen: id, "no open screen \(id)") }
        close(router)
    }

    /// `closeScreen`, with the screen it leaves visible rendered on its plugin's lane: the
    /// host goes on while it renders (a front end's close).
    public func closeScreenOnLane(_ id: Int) async throws(ScreenError) {
        try await navigator.refreshingOnLane { () throws(ScreenError) in try closeScreen(id) }
    }

    /// How many `.changed` elements the host has sent so far (one each time an outermost
    /// operation ends). A front end that notes it when it draws knows, reading it again,
    /// whether what it shows is still current, before the sequence's element arrives.
    public var changeCount: Int { navigator.changesReported }

    /// What changes, as one sequence: each event as it is logged, and `.changed` after every
    /// outermost host operation (redraw then, reading the snapshots again). Every call gives
    /// a sequence of its own, from now on; any number may be iterated at once. Each ends
    /// when the host shuts down, or when its iterating task is cancelled. Elements wait in
    /// the sequence until read: a consumer that stops reading ends its iteration.
    public var changes: AsyncStream<HostChange> {
        let (stream, continuation) = AsyncStream<HostChange>.makeStream()
        guard !changeFeeds.ended else {
            continuation.finish()
            return stream
        }
        let changeToken = addChangeObserver { continuation.yield(.changed) }
        let eventToken = addEventObserver { continuation.yield(.event($0)) }
        let key = changeFeeds.add(continuation)
        continuation.onTermination = { [weak self] _ in
            Task { @MainActor in
                self?.removeChangeObserver(changeToken)
                self?.removeEventObserver(eventToken)
                self?.changeFeeds.remove(key)
            }
        }
        return stream
    }

    /// True while `open` has `router`'s screen attached but not yet pushed (its snapshot's
    /// state is `opening`).
    package func isOpening(_ router: Router) -> Bool {
        navigator.openingPlace(of: router) != nil
    }

    private func snapshot(_ router: Router) -> ScreenSnapshot {
        ScreenSnapshot(router, opening: navigator.openingPlace(of: router), actions: declaredActions(of: router))
    }
}
