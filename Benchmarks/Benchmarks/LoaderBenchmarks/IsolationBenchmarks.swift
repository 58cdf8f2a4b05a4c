import Benchmark
@_spi(Engine) import BerthRuntime
import Foundation
#if canImport(Glibc)
import Glibc
#endif

// Isolated plugins (a worker process per plugin) against their floors: an action's round
// trip against a bare socketpair round trip of the same size, and the host operations
// against the same operations in process. Docs/benchmarks.md reports the ratios.

/// The floor of one isolated call: a frame written to a socketpair, echoed by a thread,
/// read back. Same transport as the worker's channel, no protocol and no plugin.
final class RawSocketEcho: @unchecked Sendable {
    // @unchecked: the descriptors are fixed after init; the echo thread owns its end.
    let mine: Int32
    let theirs: Int32
    private let frame: [UInt8]

    init(frameBytes: Int) {
        var pair: [Int32] = [0, 0]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &pair) == 0 else { fatalError("socketpair failed") }
        mine = pair[0]
        theirs = pair[1]
        frame = [UInt8](repeating: 7, count: frameBytes)
        let peer = theirs, count = frameBytes
        Thread {
            var buffer = [UInt8](repeating: 0, count: count)
            while Self.readAll(peer, &buffer) { _ = buffer.withUnsafeBytes { write(peer, $0.baseAddress, count) } }
        }.start()
    }

    func roundTrip() {
        var buffer = frame
        _ = frame.withUnsafeBytes { write(mine, $0.baseAddress, frame.count) }
        guard Self.readAll(mine, &buffer) else { fatalError("echo ended") }
    }

    func close() {
        shutdown(mine, Int32(SHUT_RDWR))
        Glibc.close(mine)
    }

    private static func readAll(_ descriptor: Int32, _ buffer: inout [UInt8]) -> Bool {
        var done = 0
        let count = buffer.count
        while done < count {
            let got = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress! + done, count - done) }
            guard got > 0 else { return false }
            done += got
        }
        return true
    }
}

nonisolated(unsafe) var rawEcho: RawSocketEcho?
@MainActor var workerStartHost: BerthHost?
@MainActor var workerStartStaged: StagedPlugins?

func registerIsolationBenchmarks() {
    let perIteration = Benchmark.Configuration(
        metrics: [.wallClock, .processCPU, .mallocCountTotal, .peakMemoryResident], warmupIterations: 5,
        scalingFactor: .one, maxDuration: .seconds(10), maxIterations: 10_000
    ).tuned()

    // P8, and P12 against the same round trip with the worker left unconfined (no
    // Landlock, no system-call filter, no limits): what the sandbox adds to a call.
    for (name, confined) in [("isolated action round trip (Counter increment)", true),
                             ("isolated action round trip, unsandboxed worker (Counter increment)", false)] {
        Benchmark(name, configuration: perIteration) { benchmark in
            onMainActorAsync(with: benchmark) { benchmark in
                guard let host = screenFixture?.host, let screen = host.visibleRouter?.id else { fatalError("setup did not run") }
                await measure(benchmark) {
                    // An action without a visible-screen render: send() renders once at top level,
                    // so the figure includes one render round trip as well (the user-visible cost).
                    // The action runs on the worker's lane, as a front end's does.
                    do { try await host.send(screen: screen, action: "increment", payload: []) } catch { fatalError("\(error)") }
                }
            }
        } setup: {
            try onMainActor {
                let fixture = try ScreenFixture([.counter], isolation: .process, confinesWorkers: confined)
                _ = try fixture.host.push("com.example.counter/counter")
                screenFixture = fixture
            }
        } teardown: {
            onMainActor { screenFixture?.tearDown(); screenFixture = nil }
        }
    }

    // W1: a worker's start (spawn, Swift runtime, hello, its sandbox: namespaces, limits,
    // Landlock, filter; then the plugin's dlopen and handshake) and its end, sandboxed
    // against the same worker left unconfined.
    for (name, confined) in [("isolated load+unload, a new worker each time (Counter)", true),
                             ("isolated load+unload, a new unsandboxed worker each time (Counter)", false)] {
        Benchmark(name, configuration: Benchmark.Configuration(
            metrics: [.wallClock, .processCPU], warmupIterations: 3, scalingFactor: .one, maxDuration: .seconds(20), maxIterations: 300
        ).tuned()) { benchmark in
            onMainActor(with: benchmark) { benchmark in
                guard let host = workerStartHost else { fatalError("setup did not run") }
                measure(benchmark) {
                    do {
                        blackHole(try host.load(ExamplePlugin.counter.id))
                        try host.unload(ExamplePlugin.counter.id)
                        // The worker ends on its lane after `unload` returns: W1 counts its end too.
                        host.waitForEndingWorkers()
                    } catch { fatalError("\(error)") }
                }
            }
        } setup: {
            try onMainActor {
                let staged = try StagedPlugins([.counter])
                workerStartStaged = staged
                workerStartHost = try staged.makeHost(isolation: .process, confinesWorkers: confined, keepWorkerReady: false)
            }
        } teardown: {
            onMainActor {
                workerStartHost?.shutdown()
                workerStartStaged?.remove()
                workerStartHost = nil
                workerStartStaged = nil
            }
        }
    }

    Benchmark("raw socketpair round trip (64-byte frame, echo thread)", configuration: perIteration) { benchmark in
        guard let echo = rawEcho else { fatalError("setup did not run") }
        measure(benchmark) { echo.roundTrip() }
    } setup: {
        rawEcho = RawSocketEcho(frameBytes: 64)
    } teardown: {
        rawEcho?.close()
        rawEcho = nil
    }

    Benchmark("isolated open+close screen (Counter, host)", configuration: perIteration) { benchmark in
        onMainActor(with: benchmark) { benchmark in
            guard let host = screenFixture?.host else { fatalError("setup did not run") }
            measure(benchmark) {
                do {
                    let screen = try host.push("com.example.counter/counter", argument: Array("1000".utf8))
                    host.close(screen)
                } catch { fatalError("\(error)") }
            }
        }
    } setup: {
        try onMainActor { screenFixture = try ScreenFixture([.counter], isolation: .process) }
    } teardown: {
        onMainActor { screenFixture?.tearDown(); screenFixture = nil }
    }

    Benchmark("isolated reload with 3 open screens (Counter)", configuration: Benchmark.Configuration(
        metrics: [.wallClock, .processCPU, .mallocCountTotal, .peakMemoryResident], warmupIterations: 10,
        scalingFactor: .one, maxDuration: .seconds(60), maxIterations: 2_000
    ).tuned()) { benchmark in
        onMainActor(with: benchmark) { benchmark in
            guard let host = screenFixture?.host else { fatalError("setup did not run") }
            measure(benchmark) {
                do { blackHole(try host.reload(ExamplePlugin.counter.id)) } catch { fatalError("\(error)") }
            }
        }
    } setup: {
        try onMainActor {
            let fixture = try ScreenFixture([.counter], isolation: .process)
            for _ in 0..<3 { _ = try fixture.host.push("com.example.counter/counter") }
            screenFixture = fixture
        }
    } teardown: {
        onMainActor { screenFixture?.tearDown(); screenFixture = nil }
    }

    Benchmark("isolated render pass, 10,000 stateful views (GC included)", configuration: Benchmark.Configuration(
        metrics: [.wallClock, .processCPU, .mallocCountTotal, .peakMemoryResident], warmupIterations: 3,
        scalingFactor: .one, maxDuration: .seconds(20), maxIterations: 200
    ).tuned()) { benchmark in
        onMainActor(with: benchmark) { benchmark in
            guard let host = screenFixture?.host, let screen = host.visibleRouter?.id else { fatalError("setup did not run") }
            measure(benchmark) {
                do { blackHole(try host.render(screen: screen)) } catch { fatalError("\(error)") }
            }
        }
    } setup: {
        try onMainActor {
            let fixture = try ScreenFixture([.stress], isolation: .process)
            _ = try fixture.host.push("org.berth.stress/grid", argument: Array("10000".utf8))
            screenFixture = fixture
        }
    } teardown: {
        onMainActor { screenFixture?.tearDown(); screenFixture = nil }
    }
}
