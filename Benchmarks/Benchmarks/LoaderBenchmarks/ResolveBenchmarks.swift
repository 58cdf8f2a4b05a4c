import Benchmark
@_spi(Engine) import BerthRuntime
import Foundation

// A plugin's own cached resolves (Stress's "resolve" screen resolves N times in one action,
// N the iteration's scaled count, so each figure is per resolve, the action's own cost
// spread over a thousand): from a worker group (answered in the worker) against the same
// resolve in process, and a request-scoped resolve from a worker (the kind that is a round
// trip to the host's scopes every time) against a bare socketpair round trip.
// Docs/benchmarks.md reports the ratios.

/// A host with Stress loaded (`isolation`, in `group` when given) and its resolve screen open.
@MainActor
private func resolveFixture(isolation: IsolationMode, group: String? = nil) throws -> ScreenFixture {
    let fixture = try ScreenFixture([.stress], isolation: isolation, group: group)
    _ = try fixture.host.push("org.berth.stress/resolve")
    return fixture
}

/// Measures one action of `benchmark.scaledIterations.count` resolves of `kind` ("screen",
/// "session" or "request") on the fixture's visible screen.
private func measureResolves(_ kind: String, _ benchmark: Benchmark) {
    onMainActorAsync(with: benchmark) { benchmark in
        guard let host = screenFixture?.host, let screen = host.visibleRouter?.id else { fatalError("setup did not run") }
        let count = Array(String(benchmark.scaledIterations.count).utf8)
        await measure(benchmark) {
            do { try await host.send(screen: screen, action: kind, payload: count) } catch { fatalError("\(error)") }
        }
    }
}

func registerResolveBenchmarks() {
    let perResolve = Benchmark.Configuration(
        metrics: [.wallClock, .processCPU, .mallocCountTotal], warmupIterations: 3,
        scalingFactor: .kilo, maxDuration: .seconds(10), maxIterations: 1_000
    ).tuned()

    Benchmark("plugin resolve, cached, in process (Stress, screen scope)", configuration: perResolve) { benchmark in
        measureResolves("screen", benchmark)
    } setup: {
        try onMainActor { screenFixture = try resolveFixture(isolation: .inProcess) }
    } teardown: {
        onMainActor { screenFixture?.tearDown(); screenFixture = nil }
    }

    Benchmark("plugin resolve, cached, in a worker group (Stress, screen scope)", configuration: perResolve) { benchmark in
        measureResolves("screen", benchmark)
    } setup: {
        try onMainActor { screenFixture = try resolveFixture(isolation: .process, group: "bench") }
    } teardown: {
        onMainActor { screenFixture?.tearDown(); screenFixture = nil }
    }

    Benchmark("isolated request resolve, host round trip (Stress, request scope)", configuration: perResolve) { benchmark in
        measureResolves("request", benchmark)
    } setup: {
        try onMainActor { screenFixture = try resolveFixture(isolation: .process) }
    } teardown: {
        onMainActor { screenFixture?.tearDown(); screenFixture = nil }
    }
}
