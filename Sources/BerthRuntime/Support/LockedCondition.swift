import Foundation

/// A `Locked` value that a thread can sleep on until another changes it: the one condition
/// variable, for a thread that must block (a task body's sleep, a wait for a reply, a pool
/// thread with nothing to run). Anything that need not block uses `Locked`.
///
/// A waiter looks at the value with the lock held and decides (`Decision`); between looks it
/// sleeps with the lock released until `signal`/`broadcast` or the instant it named. The
/// value is never borrowed across a sleep.
///
/// `@unchecked Sendable`: `value` is only touched with `condition` locked, and it is `Sendable`.
/// `package`: a helper the CLI shares; not part of the embedding API.
package final class LockedCondition<Value: Sendable>: @unchecked Sendable {
    /// What a waiter does after a look.
    package enum Decision<Result> {
        /// Stop waiting: return this (the lock is released).
        case finish(Result)
        /// Sleep until woken, then look again.
        case wait
        /// Sleep until woken or until the instant, then look again (`timedOut` true when the
        /// instant passed first).
        case waitUntil(ContinuousClock.Instant)
    }

    private let condition = NSCondition()
    private var value: Value

    package init(_ value: Value) {
        self.value = value
    }

    /// Runs `body` with the lock held. Wake waiters afterwards, outside it (`signal`,
    /// `broadcast`), so a woken thread finds the lock free.
    package func withLock<Result, Failure: Error>(_ body: (inout Value) throws(Failure) -> Result) throws(Failure) -> Result {
        condition.lock()
        defer { condition.unlock() }
        return try body(&value)
    }

    /// Looks at the value with the lock held until `look` finishes, sleeping between looks.
    package func wait<Result>(_ look: (inout Value, _ timedOut: Bool) -> Decision<Result>) -> Result {
        condition.lock()
        defer { condition.unlock() }
        var timedOut = false
        while true {
            switch look(&value, timedOut) {
            case .finish(let result):
                return result
            case .wait:
                condition.wait()
                timedOut = false
            case .waitUntil(let instant):
                let now = ContinuousClock.now
                timedOut = instant <= now || !condition.wait(until: Date(timeIntervalSinceNow: Self.seconds(instant - now)))
            }
        }
    }

    /// Wakes one waiter.
    package func signal() {
        condition.signal()
    }

    /// Wakes every waiter.
    package func broadcast() {
        condition.broadcast()
    }

    private static func seconds(_ duration: Duration) -> TimeInterval {
        let (seconds, attoseconds) = duration.components
        return TimeInterval(seconds) + TimeInterval(attoseconds) / 1e18
    }
}
