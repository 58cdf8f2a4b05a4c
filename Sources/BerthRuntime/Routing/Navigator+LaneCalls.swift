@_spi(Engine) import BerthCore

/// Actions, view input and renders on the screen's plugin's lane (Docs/lanes.md): the main
/// actor goes on until the plugin returns.
extension Navigator {
    /// `send` with the action on its plugin's lane: the host goes on until it returns, then
    /// one operation runs what the plugin asked for meanwhile and renders the visible screen.
    package func sendOnLane(screen id: Int, action: String, payload: [UInt8]) async throws(ScreenError) {
        try await settlingFollowUps { () async throws(ScreenError) in try await sendOnLaneOnly(screen: id, action: action, payload: payload) }
    }

    /// A managed task's post (`HostCallbackHandler.taskPost`): the action on its lane as the
    /// host's own call (`startHostCall`). A failure is an event.
    func post(to module: ModuleInstance, action: String, payload: [UInt8]) {
        startHostCall(on: module, followingUp: false) { held, renderingAfterwards async throws(ScreenError) -> Bool in
            try await module.handleOnLane(action: action, payload: payload, renderFollows: renderingAfterwards, held: held, byHost: true)
        }
    }

    /// A delegate action or a route context to an observing screen, on its lane (asked during
    /// a call on a lane: `deliverDelegate(from:action:payload:onLanes:)`,
    /// `RouteContextDispatcher`): `deliver` is the screen's call, given where the plugin's
    /// requests wait. The operation that caused it waits for it (`settlingFollowUps`). A
    /// failure is an event on the screen.
    func deliverOnLane(to module: ModuleInstance, _ deliver: @escaping (HeldRequests) async throws(ScreenError) -> Bool) {
        startHostCall(on: module, followingUp: true) { held, _ async throws(ScreenError) -> Bool in try await deliver(held) }
    }

    /// Starts a call the host makes on its own (`RunningPluginCall.Call.byHost`) on the
    /// plugin's lane, after the call the lane is in: a person's call to that plugin waits for
    /// it rather than being refused as busy. When the lane is free its start, up to the hop
    /// to the lane, runs before this returns, so such calls reach the lane in the order they
    /// came. `followingUp`: an operation running now caused it, and waits for it, whether
    /// it starts now or after the lane's call (`settlingFollowUps`).
    /// `call` is the screen's call, as for `callOnLane`.
    private func startHostCall(on module: ModuleInstance, followingUp: Bool,
                               _ call: @escaping (HeldRequests, _ renderingAfterwards: Bool) async throws(ScreenError) -> Bool) {
        let connection = module.generation.connection
        let number = followUpsStarted
        if followingUp { followUpsStarted += 1 }
        let ended = Locked(false)
        let task = Task.immediate { @MainActor [self] in
            while !connection.isFreeForHostCall {
                await withCheckedContinuation { (turn: CheckedContinuation<Void, Never>) in connection.afterCall { turn.resume() } }
            }
            do throws(ScreenError) {
                try await settlingFollowUps { () async throws(ScreenError) in try await callOnLane(to: module, byHost: true, call) }
            } catch {
                events.emit(.failed, .screen(module.id), error.message)
            }
            ended.withLock { $0 = true }
            if followingUp { deliveriesOnLanes[number] = nil }
        }
        if followingUp, !ended.withLock({ $0 }) { deliveriesOnLanes[number] = task }
    }

    private func sendOnLaneOnly(screen id: Int, action: String, payload: [UInt8]) async throws(ScreenError) {
        guard let module = router(id)?.module else { throw ScreenError(.noSuchScreen, screen: id, "no open screen \(id)") }
        try await callOnLane(to: module, byHost: false) { held, renderingAfterwards async throws(ScreenError) -> Bool in
            try await module.handleOnLane(action: action, payload: payload, renderFollows: renderingAfterwards, held: held)
        }
    }

    /// One call to `module` on its lane (`call`, given where the plugin's requests wait and
    /// whether the plugin may render along with it), then one operation runs what the plugin
    /// asked for meanwhile and renders the visible screen (on the lane when it is `module`).
    private func callOnLane(to module: ModuleInstance, byHost: Bool,
                            _ call: (HeldRequests, _ renderingAfterwards: Bool) async throws(ScreenError) -> Bool) async throws(ScreenError) {
        let renderFollows = activity.isIdle && visibleRouter?.module === module
        let held = HeldRequests()
        let outcome: Result<Bool, ScreenError>
        do throws(ScreenError) {
            // The host's own call renders nothing along with it (see below).
            outcome = .success(try await call(held, renderFollows && !byHost))
        } catch {
            outcome = .failure(error)
        }
        // After a person's call only: a synchronous caller may render the screen between the
        // host's own render's return on the lane and its commit here, which would then put an
        // older tree back. The operation that ends the host's call renders it instead.
        var failedRender: ScreenError?
        if renderFollows, !byHost, case .success(true) = outcome {
            do { try await renderAfterLaneCall(module, held) } catch { failedRender = error }
        }
        let _: Void? = try finishLaneCall(held, outcome)
        if let failedRender { events.emit(.failed, .screen(module.id), failedRender.message) }
    }

    /// The render after an action on a lane, on the lane too (`ModuleInstance.renderOnLane`),
    /// unless the plugin asked the host for work during the action: that runs first, and
    /// the operation that ends the call renders after it, as after any operation.
    private func renderAfterLaneCall(_ module: ModuleInstance, _ held: HeldRequests) async throws(ScreenError) {
        guard held.work.isEmpty, module.isActive, module.canRender, !module.isBusy else { return }
        _ = try await module.renderOnLane(held: held)
    }

    /// `render` on the screen's plugin's lane (see `ModuleInstance.renderOnLane`).
    package func renderOnLane(screen id: Int?, byHost: Bool = false) async throws(ScreenError) -> ViewTree? {
        guard let router = id.map({ router($0) }) ?? visibleRouter, let module = router.module else {
            throw ScreenError(.noSuchScreen, screen: id, id.map { "no open screen \($0)" } ?? "no screen is open")
        }
        let held = HeldRequests()
        let outcome: Result<ViewTree?, ScreenError>
        do throws(ScreenError) {
            outcome = .success(try await module.renderOnLane(held: held, byHost: byHost))
        } catch {
            outcome = .failure(error)
        }
        return try finishLaneCall(held, outcome.map { _ in true }) { () throws(ScreenError) -> ViewTree? in try outcome.get() }
    }

    /// `input` on its plugin's lane (see `sendOnLane`); returns the screen's tree after it,
    /// nil when the screen was closed meanwhile.
    package func inputOnLane(_ input: ViewInput, view viewID: String, screen id: Int?) async throws(ScreenError) -> ViewTree? {
        try await settlingFollowUps { () async throws(ScreenError) -> ViewTree? in try await inputOnLaneOnly(input, view: viewID, screen: id) }
    }

    private func inputOnLaneOnly(_ input: ViewInput, view viewID: String, screen id: Int?) async throws(ScreenError) -> ViewTree? {
        guard let router = id.map({ router($0) }) ?? visibleRouter, let module = router.module else {
            throw ScreenError(.noSuchScreen, screen: id, "no screen is open")
        }
        let held = HeldRequests()
        let outcome: Result<Bool, ScreenError>
        do throws(ScreenError) {
            outcome = .success(try await module.inputOnLane(input, view: viewID, held: held))
        } catch {
            outcome = .failure(error)
        }
        var rendered: Result<Void, ScreenError> = .success(())
        if case .success(true) = outcome {
            do throws(ScreenError) { try await renderAfterLaneCall(module, held) } catch { rendered = .failure(error) }
        }
        return try finishLaneCall(held, outcome) { () throws(ScreenError) -> ViewTree? in
            try rendered.get()
            guard module.isActive else { return nil }
            // A task's post that began meanwhile renders the screen when it ends.
            return activity.freshlyRendered === module || module.isBusy ? module.lastTree : try module.render()
        }
    }

    /// The operation that ends a call on a lane: the work the plugin asked for during it runs
    /// (in order, as after any operation), then `then` when the screen is still open.
    @discardableResult
    private func finishLaneCall<T>(_ held: HeldRequests, _ outcome: Result<Bool, ScreenError>,
                                   then: () throws(ScreenError) -> T? = { () throws(ScreenError) -> T? in nil }) throws(ScreenError) -> T? {
        // What the plugin asked for closes screens on their lanes.
        try closingOnLanes(followedUp: true) { () throws(ScreenError) -> T? in try laneCallEnds(held, outcome, then: then) }
    }

    private func laneCallEnds<T>(_ held: HeldRequests, _ outcome: Result<Bool, ScreenError>,
                                 then: () throws(ScreenError) -> T?) throws(ScreenError) -> T? {
        try topLevel { () throws(ScreenError) -> T? in
            for work in held.take() { requests.enqueue(work) }
            guard try outcome.get() else { return nil }
            return try then()
        }
    }
}
