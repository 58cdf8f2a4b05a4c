import Benchmark
import Dispatch
import Foundation
import Synchronization

/// Runs `body` on the main actor and waits for it, from whichever thread the benchmark
/// runner calls a benchmark closure on.
///
/// `BerthHost` and `PluginGeneration` are `@MainActor`. The runner calls synchronous
/// benchmark closures from its own task, which is not main-actor isolated, so every
/// measured section hops to the main thread once and does all of its iterations there;
/// the measurement is started and stopped inside the hop, so the hop itself is never
/// measured. The main thread is free while the runner works: the async `main` of the
/// benchmark executable drains the main queue while it waits.
func onMainActor<Result: Sendable>(_ body: @MainActor () throws -> Result) rethrows -> Result {
    if Thread.isMainThread {
        return try MainActor.assumeIsolated(body)
    }
    return try DispatchQueue.main.sync {
        try MainActor.assumeIsolated(body)
    }
}

/// `onMainActor` for a measured section: hands the runner's `Benchmark` to `body` on the
/// main thread, so `body` can start and stop the measurement there.
///
/// `Benchmark` is not `Sendable`; handing it over is sound because the runner's thread is
/// blocked in `DispatchQueue.main.sync` (or is the main thread itself) for as long as
/// `body` runs, so the object is never used by two threads at once.
func onMainActor(with benchmark: Benchmark, _ body: @MainActor (Benchmark) -> Void) {
    nonisolated(unsafe) let handed = benchmark
    onMainActor { body(handed) }
}

/// `onMainActor(with:)` for a body that awaits (an action on a plugin's lane): the runner's
/// thread waits while a main-actor task runs `body`, and the main actor stays free to answer
/// the lane meanwhile.
func onMainActorAsync(with benchmark: Benchmark, _ body: @escaping @MainActor (Benchmark) async -> Void) {
    nonisolated(unsafe) let handed = benchmark
    onMainActorAsync { await body(handed) }
}

/// Runs `body` in a main-actor task and waits for it (a teardown that awaits). On the main
/// thread itself (where the runner sometimes calls) it cannot block: it runs the main run
/// loop, which serves the main queue, and so the task, until the task is done.
func onMainActorAsync(_ body: @escaping @MainActor () async -> Void) {
    let done = Atomic<Bool>(false)
    let finished = DispatchSemaphore(value: 0)
    Task { @MainActor in
        await body()
        done.store(true, ordering: .releasing)
        finished.signal()
    }
    if Thread.isMainThread {
        while !done.load(ordering: .acquiring) { _ = RunLoop.main.run(mode: .default, before: Date(timeIntervalSinceNow: 0.001)) }
    } else {
        finished.wait()
    }
}
