import Benchmark
@_spi(Hops) import BerthRuntime
import Dispatch

// H1: a hop to the main actor from another thread, the way a plugin's managed task posts
// (Counter's tick: a pool thread calls `task_post`, the host hands the action to the main
// actor through the interactor's `MainActorHops`). Berth's side posts through
// `MainActorHops`, which keeps each hop in its table until it has run, so its owner can
// cancel what has not; the floor is the bare hop, `Task { @MainActor in … }`, with the same
// job. Both post a batch from the runner's thread (never the main one) and wait until the
// main actor has run all of it, so the main thread's side of each hop is measured too.

/// What each hop runs on the main actor: counts, and wakes the poster after the last one.
@MainActor
private final class HopSink {
    private var remaining = 0
    private let done = DispatchSemaphore(value: 0)

    nonisolated init() {}

    func hit() {
        remaining -= 1
        if remaining == 0 { done.signal() }
    }

    /// Posts `count` hops with `post` from the calling thread and waits until all ran.
    nonisolated func run(_ count: Int, _ post: (HopSink) -> Void) {
        DispatchQueue.main.sync { MainActor.assumeIsolated { self.remaining = count } }
        for _ in 0..<count { post(self) }
        done.wait()
    }
}

func registerHopBenchmarks() {
    let perHop = Benchmark.Configuration(
        metrics: [.wallClock, .processCPU, .mallocCountTotal], warmupIterations: 5,
        scalingFactor: .kilo, maxDuration: .seconds(5), maxIterations: 1_000
    ).tuned()

    Benchmark("task post to the main actor (MainActorHops)", configuration: perHop) { benchmark in
        let hops = MainActorHops()
        let sink = HopSink()
        measure(benchmark) {
            sink.run(benchmark.scaledIterations.count) { sink in hops.post { sink.hit() } }
        }
    }

    Benchmark("bare Task { @MainActor } hop", configuration: perHop) { benchmark in
        let sink = HopSink()
        measure(benchmark) {
            sink.run(benchmark.scaledIterations.count) { sink in Task { @MainActor in sink.hit() } }
        }
    }
}
