@_spi(Engine) import BerthCore

/// Screens closed from an operation on a lane (a front end's back, dismiss or close, and
/// what a plugin asked for during a call on its lane) leave the tree at once; their close
/// sequence's calls into the plugin (`deactivate`, events, `destroy`) run on the plugin's
/// lane, and the host goes on (Docs/lanes.md). The operation waits for them before it
/// returns (`settlingFollowUps`), with the main actor free.
extension Navigator {
    /// Runs `body` with screens closing on their lanes.
    func closingOnLanes<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> T {
        let before = closesOnLanes
        closesOnLanes = true
        defer { closesOnLanes = before }
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
            let number = followUpsStarted
            followUpsStarted += 1
            let over = Signal()
            module.closing = ModuleInstance.Closing(failed: { [events] failure in events.emit(.failed, .screen(id), failure) },
                                                    closed: { over.fire() })
            closingOnLanes[number] = Task { @MainActor [self] in
                await over.wait()
                closingOnLanes[number] = nil
                renderAfterClosing()
            }
        }
    }

    /// The visible screen an operation left unrendered while its plugin's lane ran closed
    /// screens' calls renders, once they are over.
    private func renderAfterClosing() {
        guard let module = refreshAfterClosing else { return }
        guard visibleRouter?.module === module, module.isActive else {
            refreshAfterClosing = nil
            return
        }
        guard !module.isBusy, activity.isIdle else { return }
        refreshAfterClosing = nil
        topLevel {}
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
