import Foundation
import Testing

/// For suites whose tests block their thread while they wait (for a process, a pty, a socket,
/// a build): each test runs on threads of its own instead of the cooperative pool. The pool
/// has one thread per core, and every async test, every hop to the main actor and the
/// runtime's own tasks (the plugins watcher's delivery) need one of them: two tests blocked
/// in it held all of that up for minutes in a full parallel run (measured: 93 s).
public struct BlockingTrait: SuiteTrait, TestTrait, TestScoping {
    public var isRecursive: Bool { true }

    public func provideScope(for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void) async throws {
        try await withTaskExecutorPreference(ThreadPerJobExecutor.shared) {
            try await function()
        }
    }
}

extension Trait where Self == BlockingTrait {
    /// The suite's tests block their thread while they wait: run them off the cooperative pool.
    public static var blocking: Self { BlockingTrait() }
}

/// Runs each job on a new thread: a test's job may block for as long as its wait takes,
/// and a thread of its own is all it then holds.
final class ThreadPerJobExecutor: TaskExecutor {
    static let shared = ThreadPerJobExecutor()

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedTaskExecutor()
        Thread { job.runSynchronously(on: executor) }.start()
    }
}

/// For suites whose tests build Swift packages (`berth new` packages, the tutorial's, `berth
/// dev`): one such test at a time in the whole run (`BERTH_TEST_BUILDS` sets another number).
/// Each build compiles BerthSDK from scratch: six at once on a two-core machine (a
/// fresh-clone CI, load 35) slowed every other suite past its deadlines, and two at once
/// (two compilers each) took the run past 1 GiB of memory, where the kernel killed workers
/// and the test process itself.
public struct PackageBuildsTrait: SuiteTrait, TestTrait, TestScoping {
    public var isRecursive: Bool { true }
    private static let slots = DispatchSemaphore(value: ProcessInfo.processInfo.environment["BERTH_TEST_BUILDS"].flatMap { Int($0) }.map { max(1, $0) } ?? 1)

    public func provideScope(for test: Test, testCase: Test.Case?, performing function: @Sendable () async throws -> Void) async throws {
        // Only a test's run takes a slot (never its suite's, which would hold one for all).
        guard testCase != nil else { return try await function() }
        await withCheckedContinuation { (resumed: CheckedContinuation<Void, Never>) in
            Thread {
                Self.slots.wait()
                resumed.resume()
            }.start()
        }
        defer { Self.slots.signal() }
        try await function()
    }
}

extension Trait where Self == PackageBuildsTrait {
    /// The suite's tests build Swift packages: one such test at a time in the run.
    public static var buildsPackages: Self { PackageBuildsTrait() }
}
