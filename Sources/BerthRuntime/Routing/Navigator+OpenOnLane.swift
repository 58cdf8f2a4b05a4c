@_spi(Engine) import BerthCore

/// Opening a screen with its plugin's calls on its lane (Docs/lanes.md): the opener stays
/// usable until the new screen is ready.
extension Navigator {
    /// `push` or `present` with the plugin's calls on its lane: `create`, then `activate`
    /// and the first render. The opener stays usable until the new screen is ready. Once
    /// created, the screen is attached where it goes (the top of the visible stack, or
    /// presented from the visible screen); it is pushed there once active and rendered,
    /// when nothing changed that place meanwhile (else it closes, and the error says why).
    /// What the plugin asks of the host meanwhile (navigation, delegates, a managed task's
    /// post) runs after the push, as after `push`; when the open fails it is dropped.
    package func openOnLane(_ route: Route, argument: [UInt8], presented: Bool) async throws(ScreenError) -> Router {
        try await settlingFollowUps { () async throws(ScreenError) -> Router in
            try await openOnLane(route, argument: argument, presented: presented, requested: nil)
        }
    }

    /// A screen a plugin asked the host to open (`navigate` during a call on its lane): it
    /// opens on its own lane too, with the id the plugin was promised, above `requester`
    /// (pushed on its stack, or presented from it). `held` is what waits for the open.
    struct RequestedOpen {
        let id: Int
        let requester: Router
        let held: HeldRequests
    }

    private func openOnLane(_ route: Route, argument: [UInt8], presented: Bool, requested: RequestedOpen?) async throws(ScreenError) -> Router {
        let held = requested?.held ?? HeldRequests()
        let made: Result<Router, ScreenError>
        do throws(ScreenError) {
            made = .success(try await screens.makeScreenOnLane(route, argument: argument, id: requested?.id, held: held))
        } catch {
            made = .failure(error)
        }
        // The attach is no operation of its own: nothing visible changes until the push.
        let place: OpeningPlace
        do throws(ScreenError) {
            let child = try made.get()
            do throws(ScreenError) {
                if let asker = requested?.requester, asker.isReleased {
                    throw ScreenError(.navigation, screen: child.id,
                                      "screen \(child.id) (\(child.pluginID)/\(child.route)) was not opened: screen \(asker.id), which asked for it, was closed meanwhile")
                }
                place = presented ? try attachForPresenting(child, from: requested?.requester, held: held)
                                  : try attachForPushing(child, on: requested?.requester.stack, held: held)
            } catch {
                if !child.isReleased { child.release() }
                events.emit(.released, .screen(child.id), "released: \(error.message)")
                throw error
            }
        } catch {
            return try topLevel { () throws(ScreenError) -> Router in
                dropRequests(held.take(), screen: error.screen)
                throw error
            }
        }
        let child = place.child
        openings[child.id] = place
        let activated: Result<Void, ScreenError>
        do throws(ScreenError) {
            guard let interactor = child.interactor else { throw ScreenError(.lifecycle, screen: child.id, "screen \(child.id) has no instance") }
            try await interactor.activateOnLane(held: held)
            activated = .success(())
        } catch {
            activated = .failure(error)
        }
        if case .success = activated, let module = child.module, module.isActive {
            events.emit(.activated, .screen(child.id), "active")
            // Every screen renders once when it opens (see `activate(_:)`), here on its lane.
            if module.canRender {
                do throws(ScreenError) { _ = try await module.renderOnLane(held: held) } catch { events.emit(.failed, .screen(child.id), error.message) }
            }
        }
        return try topLevel { () throws(ScreenError) -> Router in
            openings[child.id] = nil
            try finishOpening(place, activated, asked: held.take())
            return child
        }
    }

    /// Where a screen being opened on its lane goes: attached to `parent`, pushed on `stack`
    /// once active (a presented screen's `stack` is its own new one).
    struct OpeningPlace {
        let child: Router
        let parent: Router
        let stack: NavigationStack
        /// The top `stack` had at the attach (the screen goes right above it).
        let top: Router?
        let presented: Bool
        /// What the plugin asked of the host while the screen opens: it runs after the push.
        let held: HeldRequests
        /// Opened where a plugin asked (`RequestedOpen`), not on whatever is visible.
        let requested: Bool
    }

    /// Where `router` goes, while it is being opened on its lane (`openOnLane`); nil once it
    /// is pushed, or when it was never opened that way.
    func openingPlace(of router: Router) -> OpeningPlace? {
        openings[router.id]
    }

    /// Holds `work` a plugin asked for outside a call (a managed task's post) until
    /// `router`'s open on its lane is over: it then runs after the push, as it would after
    /// `push`, or is dropped when the open fails. False when `router` is not opening.
    func holdUntilOpened(_ router: Router, _ work: @escaping () -> Void) -> Bool {
        holdUntilOpened(screen: router.id, work)
    }

    /// `holdUntilOpened` by screen id: also for a screen a plugin asked to open whose router
    /// is not made yet (`startRequestedOpen`).
    func holdUntilOpened(screen id: Int, _ work: @escaping () -> Void) -> Bool {
        guard let held = openings[id]?.held ?? requestedOpenings[id]?.held else { return false }
        held.append(work)
        return true
    }

    /// A push or present a plugin asked for during a call on its lane, opened on the new
    /// screen's lane (`openOnLane`) from a task of its own: the host goes on meanwhile, and
    /// the requests queued after it run now. What the plugin asks about that screen before it
    /// is open (observing its delegate) waits for it and runs after the push. A failure is an
    /// event on `requester`, as a blocking requested push's is. The operation that asked
    /// returns once it is over (`settlingFollowUps`).
    func startRequestedOpen(_ route: Route, argument: [UInt8], from requester: Router, id: Int, present: Bool) {
        let held = HeldRequests()
        let number = followUpsStarted
        followUpsStarted += 1
        let task = Task { [self] in
            do throws(ScreenError) {
                _ = try await openOnLane(route, argument: argument, presented: present,
                                         requested: RequestedOpen(id: id, requester: requester, held: held))
            } catch {
                events.emit(.failed, .screen(requester.id), "\(present ? "present" : "push") \(route) failed: \(error.message)")
            }
            requestedOpenings[id] = nil
        }
        requestedOpenings[id] = RequestedOpening(number: number, held: held, task: task)
    }

    /// Runs `operation` (an operation with plugin calls on lanes), then waits for what its
    /// plugins caused meanwhile: the opens they asked for (`startRequestedOpen`) and the
    /// delegate actions they sent (`deliverOnLane`), and what those caused in turn. A caller
    /// that sends an action which opens a screen finds it open when the call returns, its
    /// observer told. The host goes on meanwhile.
    /// Requests held after a delivery this operation is part of (it began before this one
    /// did) are not waited for: they wait for it.
    func settlingFollowUps<T>(_ operation: () async throws(ScreenError) -> T) async throws(ScreenError) -> T {
        let start = followUpsStarted
        var first = start
        let outcome: Result<T, ScreenError>
        do throws(ScreenError) { outcome = .success(try await operation()) } catch { outcome = .failure(error) }
        while first < followUpsStarted {
            let range = first..<followUpsStarted
            first = followUpsStarted
            let tasks = requestedOpenings.values.filter { range.contains($0.number) }.map(\.task)
                + deliveriesOnLanes.filter { range.contains($0.key) }.map(\.value)
                + heldRequests.filter { range.contains($0.key) && $0.value.waitsFrom >= start }.map(\.value.task)
                + closingFollowUps.filter { range.contains($0.key) }.map(\.value)
            for task in tasks { await task.value }
        }
        return try outcome.get()
    }

    /// A screen a plugin asked to open on its lane, until the open is over: the order it was
    /// asked in, what waits for it (`holdUntilOpened(screen:)`) and the open itself.
    struct RequestedOpening {
        let number: Int
        let held: HeldRequests
        let task: Task<Void, Never>
    }

    /// attach, for a push on `requested` (a plugin's stack), else on the visible stack (see
    /// `attachActivateAndPush`).
    private func attachForPushing(_ child: Router, on requested: NavigationStack?, held: HeldRequests) throws(ScreenError) -> OpeningPlace {
        let stack = requested ?? visibleRouter?.stack ?? launchStack
        let depth = stackDepth
        guard stack.routers.count < depth else {
            throw ScreenError(.screenLimit, screen: child.id, "cannot push \(child.pluginID)/\(child.route): its stack is \(stack.routers.count) screens deep, the limit is \(depth)")
        }
        let parent = stack.top ?? stack.presenter ?? launchRouter
        guard parent.attachChild(child) else { throw ScreenError(.navigation, screen: child.id, "screen \(child.id) is already in the tree") }
        child.stack = stack
        return OpeningPlace(child: child, parent: parent, stack: stack, top: stack.top, presented: false, held: held, requested: requested != nil)
    }

    /// attach, for a presentation from `requester` (a plugin's screen), else from the visible
    /// screen (see `attachActivateAndPresent`).
    private func attachForPresenting(_ child: Router, from requester: Router?, held: HeldRequests) throws(ScreenError) -> OpeningPlace {
        guard let presenter = requester ?? visibleRouter else {
            throw ScreenError(.navigation, screen: nil, "nothing is open to present from (open a screen first)")
        }
        try checkCanPresent(from: presenter)
        guard presenter.attachChild(child) else { throw ScreenError(.navigation, screen: child.id, "screen \(child.id) is already in the tree") }
        let stack = NavigationStack(id: takeStackID(), presenter: presenter)
        child.stack = stack
        return OpeningPlace(child: child, parent: presenter, stack: stack, top: nil, presented: true, held: held, requested: requester != nil)
    }

    /// Whether `presenter` may present: it is the top of its stack, presents nothing yet,
    /// and no modal covers it.
    func checkCanPresent(from presenter: Router) throws(ScreenError) {
        guard presenter.presentedStack == nil else {
            throw ScreenError(.navigation, screen: presenter.id, "screen \(presenter.id) already presents a modal")
        }
        guard presenter.kind == .screen, let presenterStack = presenter.stack, presenterStack.top === presenter else {
            throw ScreenError(.navigation, screen: presenter.id, "screen \(presenter.id) is not the top of its stack; only the top presents")
        }
        guard !presenterStack.routers.contains(where: { $0.presentedStack?.top != nil }) else {
            throw ScreenError(.navigation, screen: presenter.id, "screen \(presenter.id) is covered by a modal; it cannot present another")
        }
    }

    /// The push (or presentation) that ends an open on the lane, with what the plugin
    /// `asked` for meanwhile run after it (queued before the push's own events, as `push`
    /// queues its activate's requests). Refused, the screen closed and `asked` dropped, when
    /// it was closed meanwhile, its activation failed, or its place changed.
    private func finishOpening(_ place: OpeningPlace, _ activated: Result<Void, ScreenError>, asked: [() -> Void]) throws(ScreenError) {
        do throws(ScreenError) {
            try closeUnlessStillOpenable(place, activated)
        } catch {
            dropRequests(asked, screen: place.child.id)
            throw error
        }
        for work in asked { requests.enqueue(work) }
        transition(removing: []) {
            place.stack.push(place.child)
            if place.presented { place.parent.presentedStack = place.stack }
        }
    }

    /// Throws, and closes the screen, when it cannot be pushed where it was attached: it was
    /// closed meanwhile, its activation failed, or its place changed.
    private func closeUnlessStillOpenable(_ place: OpeningPlace, _ activated: Result<Void, ScreenError>) throws(ScreenError) {
        let child = place.child
        guard !child.isReleased, child.parent === place.parent else {
            if !child.isReleased { deactivateDetachAndReleaseIfNeeded(child) }
            throw ScreenError(.navigation, screen: child.id, "screen \(child.id) (\(child.pluginID)/\(child.route)) was closed while it opened")
        }
        if case .failure(let error) = activated {
            place.parent.detachChild(child)
            child.release()
            events.emit(.released, .screen(child.id), "released after failed activation")
            throw error
        }
        var changed: ScreenError?
        if place.presented {
            do throws(ScreenError) { try checkCanPresent(from: place.parent) } catch { changed = error }
        } else if place.stack.top !== place.top || (!place.requested && visibleRouter !== place.top) {
            changed = ScreenError(.navigation, screen: child.id, "the stack it was opened on changed or was covered")
        } else if child.module?.isActive != true {
            changed = ScreenError(.navigation, screen: child.id, "it is no longer active")
        }
        if let changed {
            deactivateDetachAndReleaseIfNeeded(child)
            throw ScreenError(.navigation, screen: child.id,
                              "screen \(child.id) (\(child.pluginID)/\(child.route)) was not opened: \(changed.message) while it activated; open it again")
        }
    }

    /// `activate` for a blocking push or present, with what the plugin asks for meanwhile
    /// held: queued after it when it succeeds, dropped (one event says so) when it fails, as
    /// an open on the lane does (`openOnLane`).
    func activateHoldingRequests(_ child: Router) throws(ScreenError) {
        let held = HeldRequests()
        let outer = LaneHop.holding
        LaneHop.holding = held
        let activated = Result { () throws(ScreenError) in try activate(child) }
        LaneHop.holding = outer
        do {
            try activated.get()
        } catch {
            dropRequests(held.take(), screen: child.id)
            throw error
        }
        for work in held.take() { enqueue(work) }
    }

    /// What a screen whose open failed had asked for is dropped (it would act for a screen
    /// that never showed: a `popToRoot` would pop its opener's stack), in one line.
    func dropRequests(_ asked: [() -> Void], screen id: Int?) {
        guard !asked.isEmpty else { return }
        events.emit(.failed, id.map { .screen($0) } ?? .host, "dropped \(asked.count) request(s) it made while it opened: the open failed")
    }
}
