import Dispatch
import Synchronization

/// Runs async code to completion on the thread that asks, synchronously: a screen's
/// methods and a provider's `call` are synchronous C calls, and host functions may be
/// called only on the thread the host called the plugin on. The body runs as a task whose
/// executor preference is this thread: its jobs (and those of every nonisolated async
/// function it awaits) queue here, and the blocked thread runs them until the task ends.
/// Only a hop to an actor (the main actor, say) leaves the thread, and comes back.
enum CallingThreadRunner {
    static func run<T>(_ body: @escaping () async throws -> T) throws -> T {
        let executor = CallingThreadExecutor()
        // Unchecked: the body and its result never leave this thread's run of the task
        // (see above); the boxes only carry them past the task's Sendable signature.
        let work = UncheckedBox(body)
        let outcome = UncheckedBox<Result<T, any Error>?>(nil)
        Task(executorPreference: executor) {
            let result: Result<T, any Error>
            do { result = .success(try await work.value()) } catch { result = .failure(error) }
            executor.finish { outcome.value = result }
        }
        executor.runJobs()
        guard let result = outcome.value else { preconditionFailure("the task ended without a result") }
        return try result.get()
    }
}

/// A task executor whose jobs run on the one thread blocked in `runJobs`.
private final class CallingThreadExecutor: TaskExecutor {
    private struct Queue {
        var jobs: [UnownedJob] = []
        var finished = false
    }

    private let queue = Mutex(Queue())
    private let wake = DispatchSemaphore(value: 0)

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        queue.withLock { $0.jobs.append(job) }
        wake.signal()
    }

    /// Records the task's end (`record` runs under the lock, so `runJobs` sees it after).
    func finish(_ record: () -> Void) {
        queue.withLock { queue in
            record()
            queue.finished = true
        }
        wake.signal()
    }

    /// Runs jobs as they come until the task has finished.
    func runJobs() {
        while true {
            let (jobs, finished) = queue.withLock { queue in
                defer { queue.jobs.removeAll(keepingCapacity: true) }
                return (queue.jobs, queue.finished)
            }
            for job in jobs { job.runSynchronously(on: asUnownedTaskExecutor()) }
            if finished { return }
            if jobs.isEmpty { wake.wait() }
        }
    }
}

/// Carries a value into or out of the runner's task.
private final class UncheckedBox<Value>: @unchecked Sendable {
    var value: Value
    init(_ value: Value) { self.value = value }
}
