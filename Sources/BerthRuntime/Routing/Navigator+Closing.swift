@_spi(Engine) import BerthCore

/// Screens closed from an operation on a lane (a front end's back, dismiss or close, and
/// what a plugin asked for during a call on its lane) leave the tree at once; their close
/// sequence's calls into the plugin (`deactivate`, events, `destroy`) run on the plugin's
/// lane, and the host goes on (Docs/lanes.md). An operation that ends a plugin's call waits
/// for them, and for the render of the screen left visible, before it returns.
extension Navigator {
    /// Runs `body` with screens closing on their lanes; `followedUp`: the operation that
    /// runs it waits for their calls (`settlingFollowUps`), the main actor free meanwhile:
    /// it ends a plugin's call on a lane, and they are what the plugin asked for. A front
    /// end's close is not waited for: back works at once, even on a busy screen.
    func closingOnLanes<T, E: Error>(followedUp: Bool, _ body: () throws(E) -> T) throws(E) -> T {
        let before = (closesOnLanes, closesAreFollowUps)
        (closesOnLanes, closesAreFollowUps) = (true, followedUp)
        defer { (closesOnLanes, closesAreFollowUps) = before }
        return try body()
    }

    /// Runs `body` with screens closing here, their plugins called from the main actor (an
    /// unload's: the generation ends next).
    func closingOnMain<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> T {
        let before = closesOnLanes
        closesOnLanes = false
        defer { closesOnLanes = before }
        return try body()
    }

    /// Marks `routers`' screens, about to close, as closing on their lanes when screens
    /// close so now: a `deactivate`'s failure is an event on the screen, and the end of
    /// its calls a follow-up of the operation.
    func markClosing(_ routers: [Router]) {
        guard closesOnLanes else { return }
        for router in routers {
            guard let module = router.module, module.closing == nil, !module.isReleased else { continue }
            let id = router.id
            let over = Signal()
            module.closing = ModuleInstance.Closing(failed: { [events] failure in events.emit(.failed, .screen(id), failure) },
                                                    closed: { over.fire() })
            let followedUp = closesAreFollowUps
            let number = followUpsStarted
            if followedUp { followUpsStarted += 1 }
            let task = Task { @MainActor [self] in
                await over.wait()
                await renderAfterClosing()
                if followedUp { closingFollowUps[number] = nil }
            }
            if followedUp { closingFollowUps[number] = task }
        }
    }

    /// The visible screen an operation left unrendered while its plugin's lane ran closed
    /// screens' calls renders on its lane, once they are over (or, when its plugin is in
    /// another call by then, when that call ends, as any busy screen does).
    private func renderAfterClosing() async {
        guard let module = refreshAfterClosing else { return }
        guard visibleRouter?.module === module, module.isActive, module.canRender else {
            refreshAfterClosing = nil
            return
        }
        // Another closing job: its end renders it.
        guard !module.laneRunsClosedScreens else { return }
        refreshAfterClosing = nil
        guard !module.isBusy else { return }
        // The host's own: a person's call that comes meanwhile waits for it. One that began
        // first renders the screen when it ends.
        do {
            _ = try await renderOnLane(screen: module.id, byHost: true)
        } catch where error.code != .busy {
            events.emit(.failed, .screen(module.id), error.message)
        } catch {}
    }
}

/// Fired once; everyone waiting for it goes on then (at once when it has fired already).
@MainActor
final class Signal {
    private var fired = false
    private var waiting: [CheckedContinuation<Void, Never>] = []

    func fire() {
        guard !fired else { return }
        fired = true
        for waiter in waiting { waiter.resume() }
        waiting = []
    }

    func wait() async {
        guard !fired else { return }
        await withCheckedContinuation { waiting.append($0) }
    }
}
