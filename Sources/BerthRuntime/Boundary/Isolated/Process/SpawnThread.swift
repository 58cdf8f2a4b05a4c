@_spi(Engine) import BerthCore
import Foundation

/// The one thread every worker is spawned from. PR_SET_PDEATHSIG fires when the *thread*
/// that spawned the child exits, not the process: a worker spawned from a pooled thread
/// that later retires would be killed while its host is healthy. This thread never exits,
/// so it is process-wide on purpose: a host that owned it could not end it either.
final class SpawnThread: Sendable {
    static let shared = SpawnThread()

    private let jobs = LockedCondition<[@Sendable () -> Void]>([])

    private init() {
        let thread = Thread { [self] in serve() }
        thread.name = "berth.worker-spawner"
        thread.start()
    }

    /// Runs `body` on the spawn thread and returns its result.
    func run<Result: Sendable>(_ body: @escaping @Sendable () -> Result) -> Result {
        let slot = LockedCondition<Result?>(nil)
        jobs.withLock { jobs in
            jobs.append {
                let value = body()
                slot.withLock { $0 = value }
                slot.signal()
            }
        }
        jobs.signal()
        return slot.wait { result, _ in result.map { .finish($0) } ?? .wait }
    }

    private func serve() {
        while true {
            let job = jobs.wait { jobs, _ in jobs.isEmpty ? .wait : .finish(jobs.removeFirst()) }
            job()
        }
    }
}
