import Synchronization
package import CBerthSystem

/// A `Locked` value that a thread can sleep on until another changes it: the one condition
/// variable, for a thread that must block (a task body's sleep, a wait for a reply, a pool
/// thread with nothing to run). Anything that need not block uses `Locked`.
///
/// A waiter looks at the value with the lock held and decides (`Decision`); between looks it
/// sleeps with the lock released until `signal`/`broadcast` or the instant it named. The
/// value is never borrowed across a sleep. A waiter may also wake with nothing changed; it
/// then looks again.
///
/// No second mutex: the value sits in a `Locked`, and the sleep is a futex on a sequence
/// word that `signal` and `broadcast` bump. A waiter reads the sequence before each look and
/// sleeps only while it is still what it read, so a change signalled after the read cannot
/// be missed: the look sees it, or the sleep returns at once. That holds for a change made
/// outside the lock too (a lane's answer, kept in a `Locked` of its own, which its look
/// reads): read after the look, as it once was, the sequence could already hold that
/// change's bump, and the waiter slept for good with the answer in (a hang seen in a lane
/// waiting for the main actor's answer, no thread running).
///
/// `@unchecked Sendable`: the value is in a `Locked`; the sequence is an `Atomic`.
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

    private let locked: Locked<Value>
    /// Bumped by every `signal` and `broadcast`; a waiter sleeps while it is unchanged.
    private let sequence = Atomic<UInt32>(0)

    package init(_ value: Value) {
        locked = Locked(value)
    }

    /// Runs `body` with the lock held. Wake waiters afterwards, outside it (`signal`,
    /// `broadcast`), so a woken thread finds the lock free.
    package func withLock<Result, Failure: Error>(_ body: (inout Value) throws(Failure) -> Result) throws(Failure) -> Result {
        try locked.withLock(body)
    }

    /// Looks at the value with the lock held until `look` finishes, sleeping between looks.
    package func wait<Result>(_ look: (inout Value, _ timedOut: Bool) -> Decision<Result>) -> Result {
        var timedOut = false
        while true {
            // Read before the look, acquiring: a bump seen here comes with the change made
            // before it, so the look sees that change; a later bump ends the sleep.
            let (decision, seen) = locked.withLock { value in
                let seen = sequence.load(ordering: .acquiring)
                return (look(&value, timedOut), seen)
            }
            switch decision {
            case .finish(let result):
                return result
            case .wait:
                withSequenceWord { berth_futex_wait($0, seen) }
                timedOut = false
            case .waitUntil(let instant):
                let left = instant - ContinuousClock.now
                guard left > .zero else {
                    timedOut = true
                    continue
                }
                let (seconds, attoseconds) = left.components
                timedOut = withSequenceWord { berth_futex_wait_timeout($0, seen, seconds, attoseconds / 1_000_000_000) } != 0
            }
        }
    }

    /// Wakes one waiter.
    package func signal() {
        sequence.wrappingAdd(1, ordering: .releasing)
        withSequenceWord { berth_futex_wake_one($0) }
    }

    /// Wakes every waiter.
    package func broadcast() {
        sequence.wrappingAdd(1, ordering: .releasing)
        withSequenceWord { berth_futex_wake_all($0) }
    }

    private func withSequenceWord<Result>(_ body: (UnsafeMutablePointer<UInt32>) -> Result) -> Result {
        withUnsafePointer(to: sequence) { body(UnsafeMutableRawPointer(mutating: $0).assumingMemoryBound(to: UInt32.self)) }
    }
}
