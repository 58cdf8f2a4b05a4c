import Dispatch
import Testing
#if canImport(Glibc)
import Glibc
#endif

// The one way a test waits for something another thread or process does: check, wait a
// little, check again, until the condition holds or a deadline passes. The caller turns a
// false into a failure (`#expect`, `#require`, a thrown error) that says what never happened.

/// Checks `condition` every `interval` until it holds or `timeout` has passed, blocking the
/// calling thread in between; true when it held (it is checked once more at the deadline).
/// For conditions other threads or processes make true, off the main actor: every
/// main-actor test shares it, so a main-actor test waits with
/// ``eventuallyAsync(timeout:every:isolation:_:)``, and a blocking wait on it is an issue.
@discardableResult
public func eventually(
    timeout: Duration = .seconds(120), every interval: Duration = .milliseconds(1), _ condition: () throws -> Bool
) rethrows -> Bool {
    if MainQueue.isCurrent {
        Issue.record("eventually() blocks the main actor, which every main-actor test shares: wait with eventuallyAsync()")
    }
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if try condition() { return true }
        let (seconds, attoseconds) = interval.components
        usleep(UInt32(clamping: seconds * 1_000_000 + attoseconds / 1_000_000_000_000))
    }
    return try condition()
}

/// Checks `condition` every `interval` until it holds or `timeout` has passed, sleeping as a
/// task in between so the caller's actor (the main actor in most host tests) runs the work
/// the condition waits for; true when it held (it is checked once more at the end).
/// The default deadline is long because it is a deadline, not a timing: it returns as soon as
/// the condition holds, and the whole suite in parallel on a loaded two-core machine slows
/// everything down.
///
/// The timeout counts the time the caller's actor was free to run that work. A sleep that
/// took longer than `heldRound` means someone else held the actor (another test's
/// synchronous call on the shared main actor, once for two minutes in CI); the work the
/// condition waits for (a managed task's posted tick) was held too, and queued behind this
/// wait's own resume, so such a sleep counts as `heldRound` only, and the last look comes
/// after the work queued before it.
@discardableResult
public func eventuallyAsync(
    timeout: Duration = .seconds(120), every interval: Duration = .milliseconds(5), heldRound: Duration = .seconds(1),
    isolation: isolated (any Actor)? = #isolation, _ condition: () throws -> Bool
) async rethrows -> Bool {
    var waited = Duration.zero
    var round = ContinuousClock.now
    while waited < timeout {
        if try condition() { return true }
        let asleep = ContinuousClock.now
        try? await Task.sleep(for: interval)
        let now = ContinuousClock.now
        // The look counts in full (it is the caller's own work); the sleep at most `heldRound`.
        waited += (asleep - round) + min(now - asleep, heldRound)
        round = now
    }
    await Task.yield()
    return try condition()
}

/// Whether the caller runs on the main queue, the main actor's executor (on Linux the test
/// runner's main thread hands that queue to other threads, so `Thread.isMainThread` cannot tell).
enum MainQueue {
    private static let key: DispatchSpecificKey<Bool> = {
        let key = DispatchSpecificKey<Bool>()
        DispatchQueue.main.setSpecific(key: key, value: true)
        return key
    }()

    static var isCurrent: Bool { DispatchQueue.getSpecific(key: key) == true }
}
