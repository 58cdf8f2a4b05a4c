import Foundation

/// A value that threads share, read and written only inside `withLock`: Berth's one lock.
///
/// Every piece of state that more than one thread touches sits in a `Locked` (or, where a
/// thread must sleep until another changes it, in a `LockedCondition`); the one exception
/// is a counter or flag read without a lock, which is an `Atomic`, and the scope
/// registry's `ScopeLock`, kept for its measured speed (see there). Main-actor state needs
/// neither.
///
/// Inside is a pthread mutex (`NSLock`), not `Synchronization.Mutex`: on Linux that one
/// sleeps on a bare futex in the standard library, which ThreadSanitizer (run on the scope
/// tests in CI) does not see, so it reports accesses the lock orders as races.
///
/// `@unchecked Sendable`: `value` is only touched with `lock` held, and it is `Sendable`.
/// `package`: a helper the CLI shares; not part of the embedding API.
package final class Locked<Value: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value

    package init(_ value: Value) {
        self.value = value
    }

    /// Runs `body` with the lock held. Keep it short: another thread wanting the value waits
    /// for all of it (a thread that must sleep until something changes uses
    /// `LockedCondition`), and never take a lock inside that may be held by a thread waiting
    /// for this one.
    @inline(__always)
    package func withLock<Result, Failure: Error>(_ body: (inout Value) throws(Failure) -> Result) throws(Failure) -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }

    /// Like `withLock`, but gives up at once when another thread holds the lock: nil then.
    package func withLockIfAvailable<Result, Failure: Error>(_ body: (inout Value) throws(Failure) -> Result) throws(Failure) -> Result? {
        guard lock.try() else { return nil }
        defer { lock.unlock() }
        return try body(&value)
    }
}
