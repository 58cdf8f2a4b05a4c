import Foundation
import Testing
import BerthTestSupport

/// `eventuallyAsync`, the wait of every main-actor test: its actor can be held by another
/// test's synchronous call for longer than the wait's timeout. What the condition waits for
/// (a managed task's posted tick) was then queued behind the wait's own resume: the wait must
/// not end with a look made before it (TaskTicksAfterPushTests failed once in CI that way:
/// "ticks 0" at its 120 s deadline; no other test finished in those 120 s).
@Suite("Waiting on the main actor") @MainActor
struct EventuallyAsyncTests {
    @Test("work queued while the main actor was held past the timeout runs before the last look")
    func lastLookAfterQueuedWork() async {
        let done = Flag()
        let seen = await eventuallyAsync(timeout: .milliseconds(200)) {
            holdMainActorOnce(until: .milliseconds(400), queuing: { Task { @MainActor in done.value = true } })
            return done.value
        }
        #expect(seen, "the last look came before the work queued while the main actor was held")
    }

    @Test("a sleep during which the main actor was held counts as heldRound only: the wait goes on for the rest of its timeout")
    func heldSleepCountsLittle() async {
        let done = Flag()
        let holdOver = Flag()
        let lookedAfterHold = DispatchSemaphore(value: 0)
        var told = false
        let seen = await eventuallyAsync(timeout: .milliseconds(300), heldRound: .milliseconds(50)) {
            // The work comes only after the wait has looked once the hold was over (what it
            // waits for needs the main actor too, which was held as long as the wait was).
            holdMainActorOnce(until: .milliseconds(600), then: {
                holdOver.value = true
                Thread.detachNewThread {
                    _ = lookedAfterHold.wait(timeout: .now() + 60)
                    Task { @MainActor in done.value = true }
                }
            })
            if holdOver.value, !told {
                told = true
                lookedAfterHold.signal()
            }
            return done.value
        }
        #expect(seen, "the held time counted in full: the wait ended before the work that came after it")
    }

    private let held = Flag()

    /// On the first look only: holds the main actor (as another test's synchronous call does)
    /// until `offset` after now, after the wait's own resume was queued; `queuing` runs on
    /// another thread just before the main actor is let go, `then` on it right after.
    private func holdMainActorOnce(until offset: Duration, queuing work: @escaping @Sendable () -> Void = {},
                                   then: @escaping @MainActor () -> Void = {}) {
        guard !held.value else { return }
        held.value = true
        let end = Date(timeIntervalSinceNow: Double(offset / .seconds(1)))
        let letGo = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            Thread.sleep(until: end)
            work()
            letGo.signal()
        }
        Task { @MainActor in
            letGo.wait()
            then()
        }
    }
}

@MainActor
private final class Flag {
    var value = false
}
