import Foundation

/// The threads managed task bodies run on, shared by every screen (in the host and in a
/// worker): a thread whose body returned waits for the next body instead of ending, so
/// opening a screen with a task does not start a thread and closing it does not join one.
///
/// A body blocks its thread until it returns (it polls `task_is_cancelled` or sleeps in
/// `task_sleep`), so the pool holds one thread per body running at once and starts one
/// more only when none is idle; an idle thread ends after `idleLifetime`. Cancellation and
/// the wait on deactivation are `ManagedTask`'s, unchanged.
///
/// `@unchecked Sendable`: `waiting`, `idle` and `threads` are only touched under `condition`.
final class TaskThreadPool: @unchecked Sendable {
    static let shared = TaskThreadPool()

    /// How long a thread with nothing to run stays for the next body.
    private let idleLifetime: TimeInterval = 10
    private let condition = NSCondition()
    /// Bodies handed over and not yet taken by a thread.
    private var waiting: [@Sendable () -> Void] = []
    /// Threads waiting for a body.
    private var idle = 0
    /// Threads alive (running a body or idle).
    private(set) var threads = 0

    /// Runs `body` on an idle thread of the pool, or on a new one.
    func run(_ body: @escaping @Sendable () -> Void) {
        condition.lock()
        waiting.append(body)
        let startsThread = waiting.count > idle
        if startsThread { threads += 1 }
        condition.unlock()
        guard startsThread else {
            // Signalled after the unlock: the woken thread finds the lock free.
            condition.signal()
            return
        }
        let thread = Thread { [self] in serve() }
        thread.name = "berth.tasks"
        thread.start()
    }

    private func serve() {
        condition.lock()
        while true {
            while waiting.isEmpty {
                idle += 1
                let woken = condition.wait(until: Date(timeIntervalSinceNow: idleLifetime))
                idle -= 1
                if !woken && waiting.isEmpty {
                    threads -= 1
                    condition.unlock()
                    return
                }
            }
            let body = waiting.removeFirst()
            condition.unlock()
            body()
            condition.lock()
        }
    }
}
