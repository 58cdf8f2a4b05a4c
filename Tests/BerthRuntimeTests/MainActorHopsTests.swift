import Testing
@_spi(Hops) @_spi(Engine) @testable import BerthRuntime
import BerthTestSupport

/// Hops onto the main actor are counted by their owner: cancelled with the owner, no longer
/// counted once run.
@MainActor
@Suite("Hops onto the main actor")
struct MainActorHopsTests {
    @Test("a hop cancelled before it runs never runs; one that runs is no longer pending")
    func cancelledHopNeverRuns() async {
        let hops = MainActorHops()
        let ran = Locked<[String]>([])
        // The test holds the main actor: nothing posted can run before it waits.
        hops.post { ran.withLock { $0.append("cancelled") } }
        #expect(hops.pendingCount == 1)
        hops.cancelAll()
        #expect(hops.pendingCount == 0)
        hops.post { ran.withLock { $0.append("control") } }
        _ = await eventuallyAsync(timeout: .seconds(10)) { ran.withLock { !$0.isEmpty } && hops.pendingCount == 0 }
        #expect(ran.withLock { $0 } == ["control"])
        #expect(hops.pendingCount == 0)
    }

    @Test("releasing the owner cancels its hops")
    func releasedOwnerCancels() async {
        let ran = Locked<[String]>([])
        var owner: MainActorHops? = MainActorHops()
        owner?.post { ran.withLock { $0.append("released owner") } }
        owner = nil
        let control = MainActorHops()
        control.post { ran.withLock { $0.append("control") } }
        _ = await eventuallyAsync(timeout: .seconds(10)) { ran.withLock { !$0.isEmpty } && control.pendingCount == 0 }
        #expect(ran.withLock { $0 } == ["control"])
    }

    @Test("an awaiting job already running when its hops are cancelled runs to its end, not told")
    func runningJobFinishes() async {
        let hops = MainActorHops()
        let steps = Locked<[String]>([])
        let started = Locked(false)
        let release = Locked(false)
        hops.post { () async in
            steps.withLock { $0.append("started") }
            started.withLock { $0 = true }
            while !release.withLock({ $0 }) { await Task.yield() }
            steps.withLock { $0.append(Task.isCancelled ? "told" : "finished") }
        }
        #expect(await eventuallyAsync { started.withLock { $0 } })
        hops.cancelAll()
        release.withLock { $0 = true }
        #expect(await eventuallyAsync { steps.withLock { $0.count == 2 } })
        #expect(steps.withLock { $0 } == ["started", "finished"])
    }
}
