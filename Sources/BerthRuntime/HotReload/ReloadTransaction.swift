@_spi(Engine) import BerthCore
/// One reload of a plugin with open screens, as a value that owns what it took out.
///
/// Its initializer takes every open screen of the plugin out of its place, deepest first
/// (save_state, deactivate, removal events, destroy) and keeps their state; `commit` loads
/// the new generation and reopens the same routes in the same places. Any failure goes
/// through the one rollback path: the failed generation's instances come out, the old
/// generation's go back with the state they had, and the error names the step.
@MainActor
struct ReloadTransaction {
    private let navigator: Navigator
    private let events: EventLog
    private let record: PluginRecord
    private let old: PluginGeneration
    private let previousSource: ValidatedPlugin
    /// The routers whose instances were taken out, deepest first.
    let places: [Router]
    /// Each screen's `@State` slots, by router id.
    private let slots: [Int: [StateStorage.Key: StateStorage.Slot]]
    /// Each screen's `save_state` bytes, by router id.
    private let instanceState: [Int: [UInt8]]
    private let keepState: Bool
    /// The phases this transaction measured: closing the old screens, reopening, restoring.
    private(set) var timings = ReloadTimings()

    /// Takes the plugin's open screens out. `record.source` is already the new source.
    init(navigator: Navigator, events: EventLog, record: PluginRecord, old: PluginGeneration, previousSource: ValidatedPlugin, keepState: Bool) {
        self.navigator = navigator
        self.events = events
        self.record = record
        self.old = old
        self.previousSource = previousSource
        self.keepState = keepState
        places = navigator.routers(of: old.pluginID)
        var slots: [Int: [StateStorage.Key: StateStorage.Slot]] = [:]
        var instanceState: [Int: [UInt8]] = [:]
        for router in places {
            guard let module = router.module else { continue }
            slots[router.id] = module.stateStorage.snapshot
            instanceState[router.id] = try? module.saveState()
        }
        self.slots = slots
        self.instanceState = instanceState
        let closing = ContinuousClock.now
        Self.takeOut(places, navigator: navigator, events: events)
        timings.closeOldScreens = closing.elapsed
    }

    /// Loads a generation with `load` and reopens every place from it. On failure the old
    /// generation is back in every place (a new one that loaded is ended with `end`) and
    /// the error says which step failed.
    mutating func commit(_ load: () throws(LoaderError) -> PluginGeneration,
                         end: (PluginGeneration) -> Void) throws(LoaderError) -> PluginGeneration {
        let fresh: PluginGeneration
        do {
            fresh = try load()
        } catch {
            throw rollBack(.load, error, failed: nil, end: end)
        }
        let loaded = fresh.connection.loadTimings
        timings.copyAndHash = loaded.copyAndHash
        timings.dlopen = loaded.dlopen
        timings.handshake = loaded.handshake
        let reopening = ContinuousClock.now
        do throws(ScreenError) {
            try Self.reopen(places, from: fresh, navigator: navigator, events: events, slots: keepState ? slots : [:], instanceState: keepState ? instanceState : [:],
                            restoring: &timings.restore)
            timings.reopen = reopening.elapsed - timings.restore
        } catch {
            var failure = LoaderError(.screenFailed, plugin: old.pluginID, detail: error.message)
            failure.screenError = error
            throw rollBack(.reopen, failure, failed: fresh, end: end)
        }
        record.loaded(fresh)
        return fresh
    }

    /// The one way back: the failed generation (if it loaded) comes out and ends, the old
    /// source and instances return.
    private func rollBack(_ step: LoaderError.Rollback.Step, _ error: LoaderError, failed: PluginGeneration?,
                          end: (PluginGeneration) -> Void) -> LoaderError {
        if let failed {
            Self.takeOut(places, navigator: navigator, events: events)
            end(failed)
        }
        record.source = previousSource
        var restoring = Duration.zero
        do {
            try Self.reopen(places, from: old, navigator: navigator, events: events, slots: slots, instanceState: instanceState, restoring: &restoring)
        } catch {
            events.emit(.failed, .plugin(old.pluginID), "rollback could not reopen a screen: \(error.message)")
            // A place left without an instance is closed, with everything above it.
            for router in places where router.interactor == nil && !router.isReleased {
                navigator.close(router)
            }
        }
        var rolledBack = error
        rolledBack.rollback = LoaderError.Rollback(step: step, generation: old.number)
        events.emit(.failed, .plugin(old.pluginID), rolledBack.message)
        return rolledBack
    }

    /// Deactivates every place's instance (deepest first), sends the removal events through
    /// `ScreenEventPlanner` as any transition that removes screens does (every
    /// `willDisappear`, then every `didDisappear`), then destroys the instances. The routers
    /// stay where they are.
    private static func takeOut(_ places: [Router], navigator: Navigator, events: EventLog) {
        let taken = places.filter { $0.interactor != nil }
        for router in taken {
            router.interactor?.deactivate()
            events.emit(.deactivated, .screen(router.id), "inactive (reload)")
        }
        let removal = ScreenEventPlanner.plan(visibleBefore: nil as ObjectIdentifier?, visibleAfter: nil,
                                             removed: taken.map(ObjectIdentifier.init), hasAppeared: { _ in true })
        for planned in removal {
            guard let router = taken.first(where: { ObjectIdentifier($0) == planned.screen }), let module = router.interactor?.module else { continue }
            navigator.deliver(planned.event, to: module, of: router)
        }
        for router in taken {
            try? router.interactor?.release()
            router.interactor = nil
            // The router stays, so observations of its children stay valid (the new instance
            // could not learn their ids again); its route-context observers are the
            // instance's own choice, so the fresh instance registers its own.
            router.contextObservers.removeAll { $0.isScreen }
            events.emit(.released, .screen(router.id), "instance released (reload)")
        }
    }

    /// Creates, activates and shows fresh instances from `generation` (shallowest first),
    /// handing each the state kept for it (the time that takes is added to `restoring`).
    /// Throws on the first failure.
    private static func reopen(_ places: [Router], from generation: PluginGeneration, navigator: Navigator, events: EventLog,
                               slots: [Int: [StateStorage.Key: StateStorage.Slot]], instanceState: [Int: [UInt8]],
                               restoring: inout Duration) throws(ScreenError) {
        for router in places.reversed() {
            // The same screen-making code as navigation, with the screen's argument; the kept
            // state goes in first.
            let module = try navigator.screens.makeInstance(on: router, generation: generation, argument: router.argument,
                                                            reopened: true) { module in
                let restoreStarted = ContinuousClock.now
                if let kept = slots[router.id], !kept.isEmpty {
                    module.stateStorage.restore(kept)
                    events.emit(.event, .screen(router.id), "kept \(kept.count) state slot(s)")
                }
                if let bytes = instanceState[router.id], !bytes.isEmpty {
                    do throws(ScreenError) {
                        try module.restoreState(bytes)
                    } catch {
                        events.emit(.failed, .screen(router.id), "\(error.message); the instance starts fresh")
                    }
                }
                restoring += restoreStarted.elapsed
            }
            try navigator.activate(router)
            if navigator.visibleRouter === router {
                navigator.deliver(.willAppear(isPresentedInitially: true), to: module, of: router)
                navigator.deliver(.didAppear(isPresentedInitially: true), to: module, of: router)
            }
        }
    }
}
