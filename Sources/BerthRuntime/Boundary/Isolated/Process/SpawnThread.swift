import Foundation

/// The one thread every worker is spawned from. PR_SET_PDEATHSIG fires when the *thread*
/// that spawned the child exits, not the process: a worker spawned from a pooled thread
/// that later retires would be killed while its host is healthy. This thread never exits.
///
/// `@unchecked Sendable`: `jobs` is only touched with `condition` locked.
final class SpawnThread: @unchecked Sendable {
    static let shared = SpawnThread()

    private let condition = NSCondition()
    private var jobs: [@Sendable () -> Void] = []

    private init() {
        let thread = Thread { [self] in serve() }
        thread.name = "berth.worker-spawner"
        thread.start()
    }

    /// Runs `body` on the spawn thread and returns its result.
    func run<Result: Sendable>(_ body: @escaping @Sendable () -> Result) -> Result {
        let done = DispatchSemaphore(value: 0)
        let slot = Locked<Result?>(nil)
        condition.lock()
        jobs.append {
            let value = body()
            slot.withLock { $0 = value }
            done.signal()
        }
        condition.signal()
        condition.unlock()
        done.wait()
        guard let result = slot.withLock({ $0 }) else { preconditionFailure("a spawn job always stores its result") }
        return result
    }

    private func serve() {
        while true {
            condition.lock()
            while jobs.isEmpty { condition.wait() }
            let job = jobs.removeFirst()
            condition.unlock()
            job()
        }
    }
}
