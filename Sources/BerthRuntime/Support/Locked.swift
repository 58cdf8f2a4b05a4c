import Foundation

/// A value behind a pthread mutex (`NSLock`).
///
/// The rest of the runtime uses this rather than `Synchronization.Mutex` (the scope code has
/// its own `ScopeLock`, an atomic spin lock TSan also sees): on Linux that one locks
/// with a bare futex, which ThreadSanitizer cannot see, so TSan (run on the scope tests in
/// CI) would report accesses inside the lock as races.
/// `@unchecked Sendable`: `value` is only read or written while `lock` is held.
final class Locked<Value>: @unchecked Sendable {
    private let lock: NSLock
    private var value: Value

    /// `lock` may be shared by several values (a registry and its scopes), so one critical
    /// section can read them all (`withLockHeld`).
    init(_ value: Value, lock: NSLock = NSLock()) {
        self.value = value
        self.lock = lock
    }

    func withLock<Result, Failure: Error>(_ body: (inout Value) throws(Failure) -> Result) throws(Failure) -> Result {
        lock.lock()
        defer { lock.unlock() }
        return try body(&value)
    }

    /// For a caller already inside `withLock` of a value sharing this lock.
    func withLockHeld<Result>(_ body: (inout Value) -> Result) -> Result {
        body(&value)
    }
}
