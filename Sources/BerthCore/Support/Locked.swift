import Synchronization
package import CBerthSystem

/// A value that threads share, read and written only inside `withLock`: Berth's one lock.
///
/// Every piece of state that more than one thread touches sits in a `Locked` (or, where a
/// thread must sleep until another changes it, in a `LockedCondition`); the one exception
/// is a counter or flag read without a lock, which is an `Atomic`. State kept outside one
/// (the scope registry and its scopes share a `Locked(())` for theirs) is touched only
/// within its `withLock`. Main-actor state needs neither.
///
/// Inside is a futex lock on one 32-bit `Atomic` word: taking it free is one
/// compare-and-swap, releasing it one exchange; a thread that finds it held spins briefly,
/// then sleeps in the kernel (futex) until the holder wakes it. ThreadSanitizer (run on the
/// scope tests in CI) sees it: the acquiring swap and the releasing exchange are atomics
/// compiled into this module, which TSan instruments. Not `Synchronization.Mutex`, whose
/// atomics live in the unsanitized standard library (TSan then reports accesses the lock
/// orders as races), nor a pthread mutex: its two calls cost a cached scope resolve, which
/// holds the lock for a handful of instructions, a fifth of its time (P4 in
/// Docs/benchmarks.md).
///
/// `@unchecked Sendable`: `value` is only touched with the lock held, and it is `Sendable`.
/// `package`: a helper the CLI shares; not part of the embedding API.
package final class Locked<Value: Sendable>: @unchecked Sendable {
    /// 0: free; 1: held; 2: held, and a thread may be asleep waiting for it.
    private let word = Atomic<UInt32>(0)
    /// Touched only with the lock held, so the dynamic exclusivity check of each access
    /// would prove nothing (and cost a call per `withLock`).
    @exclusivity(unchecked) private var value: Value

    package init(_ value: Value) {
        self.value = value
    }

    /// Runs `body` with the lock held. Keep it short: another thread wanting the value waits
    /// for all of it (a thread that must sleep until something changes uses
    /// `LockedCondition`), and never take a lock inside that may be held by a thread waiting
    /// for this one.
    @inline(__always)
    package func withLock<Result, Failure: Error>(_ body: (inout Value) throws(Failure) -> Result) throws(Failure) -> Result {
        lock()
        defer { unlock() }
        return try body(&value)
    }

    /// Runs `body` with the lock held, for a `Locked(())` that guards state kept beside it
    /// (the scope registry's): nothing of the lock's own is passed in.
    @inline(__always)
    package func whileLocked<Result, Failure: Error>(_ body: () throws(Failure) -> Result) throws(Failure) -> Result where Value == Void {
        lock()
        defer { unlock() }
        return try body()
    }

    /// Like `withLock`, but gives up at once when another thread holds the lock: nil then.
    @inline(__always)
    package func withLockIfAvailable<Result, Failure: Error>(_ body: (inout Value) throws(Failure) -> Result) throws(Failure) -> Result? {
        guard word.compareExchange(expected: 0, desired: 1, ordering: .acquiring).exchanged else { return nil }
        defer { unlock() }
        return try body(&value)
    }

    @inline(__always)
    private func lock() {
        if !word.compareExchange(expected: 0, desired: 1, ordering: .acquiring).exchanged { lockContended() }
    }

    @inline(__always)
    private func unlock() {
        if word.exchange(0, ordering: .releasing) == 2 { wakeOne() }
    }

    /// Another thread holds the lock: spin a little (a holder leaves within instructions),
    /// then mark the word contended and sleep until an unlock wakes this thread.
    @inline(never)
    private func lockContended() {
        for _ in 0..<100 {
            if word.load(ordering: .relaxed) == 0,
               word.compareExchange(expected: 0, desired: 1, ordering: .acquiring).exchanged { return }
        }
        // Taken with 2, not 1: another sleeper may still wait, and its wake must not be lost.
        while word.exchange(2, ordering: .acquiring) != 0 {
            withUnsafePointer(to: word) { berth_futex_wait(UnsafeMutableRawPointer(mutating: $0).assumingMemoryBound(to: UInt32.self), 2) }
        }
    }

    @inline(never)
    private func wakeOne() {
        withUnsafePointer(to: word) { berth_futex_wake_one(UnsafeMutableRawPointer(mutating: $0).assumingMemoryBound(to: UInt32.self)) }
    }
}
