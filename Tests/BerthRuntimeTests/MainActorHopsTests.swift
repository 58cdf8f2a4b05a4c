import Testing
@testable import BerthRuntime
import BerthTestSupport

/// Hops onto the main actor live in their owner's keyed table: cancelled with the owner,
/// gone from the table once run.
@MainActor
@Suite("Hops onto the main actor")
struct MainActorHopsTests {
    @Test("a hop cancelled before it runs never runs; one that runs leaves the table")
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
}
