internal import Glibc

/// The threads managed task bodies run on, shared by every screen (in the host and in a
/// worker): a thread whose body returned waits for the next body instead of ending, so
/// opening a screen with a task does not start a thread and closing it does not join one.
///
/// A body blocks its thread until it returns (it polls `task_is_cancelled` or sleeps in
/// `task_sleep`), so the pool holds one thread per body running at once and starts one
/// more only when none is idle; an idle thread ends after `idleLifetime`. Cancellation and
/// the wait on deactivation are `ManagedTask`'s, unchanged.
///
/// Process-wide on purpose: threads are the process's, an idle one ends by itself, and a
/// body's thread is the plugin's until the body returns, whichever host started it.
package final class TaskThreadPool: Sendable {
    package static let shared = TaskThreadPool()

    /// How long a thread with nothing to run stays for the next body.
    private let idleLifetime: Duration = .seconds(10)
    private struct Threads {
        /// Bodies handed over and not yet taken by a thread.
        var waiting: [@Sendable () -> Void] = []
        /// Threads waiting for a body.
        var idle = 0
        /// Threads alive (running a body or idle).
        var alive = 0
    }
    private let pool = LockedCondition(Threads())

    /// Runs `body` on an idle thread of the pool, or on a new one.
    package func run(_ body: @escaping @Sendable () -> Void) {
        let startsThread = pool.withLock { pool in
            pool.waiting.append(body)
            let starts = pool.waiting.count > pool.idle
            if starts { pool.alive += 1 }
            return starts
        }
        guard startsThread else {
            // Signalled after the unlock: the woken thread finds the lock free.
            pool.signal()
            return
        }
        DetachedThread.start(name: "berth.tasks") { [self] in serve() }
    }

    private func serve() {
        while let body = nextBody() { body() }
    }

    /// The next body to run, waiting up to `idleLifetime` for one; nil when none came (the
    /// thread then ends, no longer counted).
    private func nextBody() -> (@Sendable () -> Void)? {
        var idleSince: ContinuousClock.Instant?
        return pool.wait { pool, timedOut in
            if idleSince != nil { pool.idle -= 1 }
            if !pool.waiting.isEmpty { return .finish(pool.waiting.removeFirst()) }
            if timedOut {
                pool.alive -= 1
                return .finish(nil)
            }
            pool.idle += 1
            let since = idleSince ?? .now
            idleSince = since
            return .waitUntil(since + idleLifetime)
        }
    }
}
