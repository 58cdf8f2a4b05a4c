import Benchmark
@_spi(Engine) import BerthRuntime
import Foundation
import RawFFI
#if canImport(Glibc)
import Glibc
#endif

// Loader benchmarks: each Berth operation is registered next to a baseline that does the
// irreducible part of the same work in the same process, so Docs/benchmarks.md can give a
// ratio (Berth / baseline) from a single run. Nothing here is asserted by a test.
//
// The runner starts a fresh process for every benchmark, so the Swift images retired by
// one benchmark never weigh on another.

// MARK: Fixtures (main actor: BerthHost and PluginGeneration are @MainActor)

/// A host over freshly staged plugins with `plugin` loaded.
@MainActor
final class HostFixture {
    let staged: StagedPlugins
    let host: BerthHost
    let plugin: ExamplePlugin

    init(_ plugin: ExamplePlugin, canary: Bool = false) throws {
        self.plugin = plugin
        staged = try StagedPlugins([plugin])
        host = try staged.makeHost(canary: canary)
        try host.load(plugin.id)
    }

    func tearDown() {
        host.shutdown()
        staged.remove()
    }
}

/// What the baselines need: staged files and a raw loader writing into `raw/`.
@MainActor
final class RawFixture {
    let staged: StagedPlugins
    let plugin: ExamplePlugin
    var loader: RawLoader

    init(_ plugin: ExamplePlugin) throws {
        self.plugin = plugin
        staged = try StagedPlugins([plugin])
        loader = RawLoader(source: staged.library(of: plugin), folder: staged.raw)
    }

    func tearDown() {
        staged.remove()
    }
}

/// `greeter_add` reached the way a C host would: dlsym'd once, called through its pointer.
@MainActor
final class DirectCallFixture {
    typealias Add = @convention(c) (Int32, Int32) -> Int32
    let staged: StagedPlugins
    let handle: UnsafeMutableRawPointer
    let add: Add

    init() throws {
        staged = try StagedPlugins([.greeter])
        let path = staged.library(of: .greeter)
        guard let handle = dlopen(path, RTLD_NOW | RTLD_LOCAL) else {
            fatalError("dlopen \(path) failed: \(dlerror().map { String(cString: $0) } ?? "unknown error")")
        }
        guard let address = dlsym(handle, "greeter_add") else { fatalError("greeter_add not found in \(path)") }
        self.handle = handle
        add = unsafeBitCast(address, to: Add.self)
    }

    func tearDown() {
        dlclose(handle)
        staged.remove()
    }
}

/// `greeter_add` through libffi the way a C host calls a prepared interface: the cif made
/// once, each call only `ffi_call` (the floor of an export call, P3).
@MainActor
final class RawFFIFixture {
    let direct: DirectCallFixture
    let site: OpaquePointer

    init() throws {
        direct = try DirectCallFixture()
        guard let site = bench_raw_ffi_prepare(unsafeBitCast(direct.add, to: UnsafeMutableRawPointer.self)) else {
            fatalError("ffi_prep_cif refused int32(int32, int32)")
        }
        self.site = site
    }

    func tearDown() {
        bench_raw_ffi_free(site)
        direct.tearDown()
    }
}

// One fixture per process at most (the runner runs one benchmark per process).
@MainActor var hostFixture: HostFixture?
@MainActor var rawFixture: RawFixture?
@MainActor var directCallFixture: DirectCallFixture?
@MainActor var rawFFIFixture: RawFFIFixture?

// MARK: Measured bodies

/// `iterations` reloads of the fixture's plugin: each one validates the folder again, then
/// makes a generation (shadow copy, dlopen, dlsym, handshake, one cif per export) and ends
/// the old one (dlclose + RTLD_NOLOAD proof for C, retirement for Swift).
@MainActor
func reloadLoop(_ iterations: Range<Int>) {
    guard let fixture = hostFixture else { fatalError("setup did not run") }
    for _ in iterations {
        do {
            blackHole(try fixture.host.reload(fixture.plugin.id))
        } catch {
            fatalError("reload of \(fixture.plugin.id) failed: \(error)")
        }
    }
}

// MARK: Registration

/// A benchmark of calls into Greeter's `greeter_add`: `prepare` runs before the measurement
/// (binding a call site, say) and returns the measured loop.
func exportCallBenchmark(
    _ name: String, configuration: Benchmark.Configuration,
    prepare: @escaping @MainActor (PluginGeneration) throws -> @MainActor (Range<Int>) throws -> Void
) {
    Benchmark(name, configuration: configuration) { benchmark in
        onMainActor(with: benchmark) { benchmark in
            guard let generation = hostFixture?.host.generation(of: ExamplePlugin.greeter.id) else {
                fatalError("setup did not run")
            }
            do {
                let loop = try prepare(generation)
                try measure(benchmark) { try loop(benchmark.scaledIterations) }
            } catch {
                fatalError("greeter_add failed: \(error)")
            }
        }
    } setup: {
        try onMainActor { hostFixture = try HostFixture(.greeter) }
    } teardown: {
        onMainActor { hostFixture?.tearDown(); hostFixture = nil }
    }
}

let benchmarks: @Sendable () -> Void = {
    let loadMetrics: [BenchmarkMetric] = [.wallClock, .cpuTotal, .processCPU, .mallocCountTotal, .peakMemoryResident]
    let callMetrics: [BenchmarkMetric] = [.wallClock, .cpuTotal, .processCPU, .mallocCountTotal]

    // The harness's cpuTotal counts 10 ms scheduler ticks, so C loads, steps and calls run
    // in batches (`scalingFactor`: one measured iteration = 1,000 operations; the default
    // text output divides every figure by the batch size, marked `*`). `.processCPU` is
    // the precise CPU figure for every benchmark.

    // A C generation is closed when the next one replaces it, so the loop is bounded only
    // by time.
    let cLoad = Benchmark.Configuration(
        metrics: loadMetrics, warmupIterations: 1, scalingFactor: .kilo, maxDuration: .seconds(20), maxIterations: 100
    ).tuned(countedScale: .one)
    // Every Swift generation stays mapped for the life of the process (retired, never
    // dlclosed), so the count is bounded: 20 warm-up + 2,000 measured loads, one load per
    // iteration, so the percentiles show how the cost moves as images pile up.
    let swiftLoad = Benchmark.Configuration(
        metrics: loadMetrics, warmupIterations: 20, scalingFactor: .one, maxDuration: .seconds(60), maxIterations: 2_000
    ).tuned()
    // The first loads of a process (P1-swift): 100 loads, no warm-up, before retired images
    // pile up.
    let firstSwiftLoads = Benchmark.Configuration(
        metrics: loadMetrics, warmupIterations: 0, scalingFactor: .one, maxDuration: .seconds(20), maxIterations: 100
    ).tuned()
    // Single steps of a reload, for the breakdown. One measured iteration = 1,000 steps.
    let step = Benchmark.Configuration(
        metrics: loadMetrics, warmupIterations: 1, scalingFactor: .kilo, maxDuration: .seconds(10), maxIterations: 100
    ).tuned(countedScale: .one)
    // One measured iteration = 1,000 calls.
    let call = Benchmark.Configuration(
        metrics: callMetrics, warmupIterations: 5, scalingFactor: .kilo, maxDuration: .seconds(3), maxIterations: 10_000
    ).tuned()

    // MARK: Greeter (C): generation load vs copy + dlopen + dlsym + dlclose

    Benchmark("load+handshake (Berth generation, Greeter C)", configuration: cLoad) { benchmark in
        onMainActor(with: benchmark) { benchmark in
            measure(benchmark) {
                reloadLoop(benchmark.scaledIterations)
            }
        }
    } setup: {
        try onMainActor { hostFixture = try HostFixture(.greeter) }
    } teardown: {
        onMainActor { hostFixture?.tearDown(); hostFixture = nil }
    }

    // The same load with its trial run in a throwaway worker first (the canary, on by
    // default in a host): what it costs per load.
    Benchmark("load+handshake with canary (Berth generation, Greeter C)", configuration: cLoad) { benchmark in
        onMainActor(with: benchmark) { benchmark in
            measure(benchmark) {
                reloadLoop(benchmark.scaledIterations)
            }
        }
    } setup: {
        try onMainActor { hostFixture = try HostFixture(.greeter, canary: true) }
    } teardown: {
        onMainActor { hostFixture?.tearDown(); hostFixture = nil }
    }

    Benchmark("raw copy+dlopen+dlsym (Greeter)", configuration: cLoad) { benchmark in
        onMainActor(with: benchmark) { benchmark in
            guard let fixture = rawFixture else { fatalError("setup did not run") }
            measure(benchmark) {
                for _ in benchmark.scaledIterations {
                    blackHole(fixture.loader.loadAndCloseC(entry: fixture.plugin.entry))
                }
            }
        }
    } setup: {
        try onMainActor { rawFixture = try RawFixture(.greeter) }
    } teardown: {
        onMainActor { rawFixture?.tearDown(); rawFixture = nil }
    }

    // MARK: Counter (Swift): generation load vs copy + dlopen(NODELETE) + dlsym

    // 2,000 loads, and the first 100 of a process (P1-swift).
    for (label, configuration) in [("", swiftLoad), (", first 100 loads", firstSwiftLoads)] {
        Benchmark("load+handshake\(label) (Berth generation, Counter Swift)", configuration: configuration) { benchmark in
            onMainActor(with: benchmark) { benchmark in
                measure(benchmark) {
                    reloadLoop(benchmark.scaledIterations)
                }
            }
        } setup: {
            try onMainActor { hostFixture = try HostFixture(.counter) }
        } teardown: {
            onMainActor { hostFixture?.tearDown(); hostFixture = nil }
        }

        Benchmark("raw copy+dlopen+dlsym\(label) (Counter)", configuration: configuration) { benchmark in
            onMainActor(with: benchmark) { benchmark in
                guard let fixture = rawFixture else { fatalError("setup did not run") }
                measure(benchmark) {
                    for _ in benchmark.scaledIterations {
                        blackHole(fixture.loader.loadAndKeepSwift(entry: fixture.plugin.entry))
                    }
                }
            }
        } setup: {
            try onMainActor { rawFixture = try RawFixture(.counter) }
        } teardown: {
            onMainActor { rawFixture?.tearDown(); rawFixture = nil }
        }
    }

    // MARK: Export call: libffi through the generation vs a direct C call

    // The typed path (P3): a call site bound once, the Swift values written straight into
    // the prepared libffi slots.
    exportCallBenchmark("libffi export call (greeter_add)", configuration: call) { generation in
        let add = try generation.exportCallSite("greeter_add", arguments: Int32.self, Int32.self, returning: Int32.self)
        return { iterations in
            for _ in iterations { blackHole(try add(2, 40)) }
        }
    }

    // The general path (`berth call`, any type): each value boxed as an FFIValue.
    exportCallBenchmark("libffi export call, FFIValue path (greeter_add)", configuration: call) { generation in
        { iterations in
            for _ in iterations { blackHole(try generation.call("greeter_add", arguments: [.int32(2), .int32(40)])) }
        }
    }

    Benchmark("direct C call through function pointer (greeter_add)", configuration: call) { benchmark in
        onMainActor(with: benchmark) { benchmark in
            guard let add = directCallFixture?.add else { fatalError("setup did not run") }
            measure(benchmark) {
                for _ in benchmark.scaledIterations {
                    blackHole(add(2, 40))
                }
            }
        }
    } setup: {
        try onMainActor { directCallFixture = try DirectCallFixture() }
    } teardown: {
        onMainActor { directCallFixture?.tearDown(); directCallFixture = nil }
    }

    Benchmark("raw ffi_call with a prepared cif (greeter_add)", configuration: call) { benchmark in
        onMainActor(with: benchmark) { benchmark in
            guard let site = rawFFIFixture?.site else { fatalError("setup did not run") }
            measure(benchmark) {
                for _ in benchmark.scaledIterations {
                    blackHole(bench_raw_ffi_call(site, 2, 40))
                }
            }
        }
    } setup: {
        try onMainActor { rawFFIFixture = try RawFFIFixture() }
    } teardown: {
        onMainActor { rawFFIFixture?.tearDown(); rawFFIFixture = nil }
    }

    // MARK: Breakdown: single steps of a reload, to see where the time goes

    for plugin in [ExamplePlugin.greeter, .counter] {
        let name = plugin.id == ExamplePlugin.greeter.id ? "Greeter" : "Counter"

        // What `reload` does before it loads anything: manifest decode, containment,
        // reading the whole library, SHA-256, ELF dynamic symbol table.
        Benchmark("step: validate folder (\(name))", configuration: step) { benchmark in
            onMainActor(with: benchmark) { benchmark in
                guard let fixture = rawFixture else { fatalError("setup did not run") }
                let folder = fixture.staged.folder(of: fixture.plugin)
                measure(benchmark) {
                    for _ in benchmark.scaledIterations {
                        guard case .success(let plugin) = PluginValidator.validate(path: folder) else {
                            fatalError("\(folder) no longer validates")
                        }
                        blackHole(plugin)
                    }
                }
            }
        } setup: {
            try onMainActor { rawFixture = try RawFixture(plugin) }
        } teardown: {
            onMainActor { rawFixture?.tearDown(); rawFixture = nil }
        }

        // The copy to a fresh path and its removal, without any dlopen.
        Benchmark("step: copy+delete only (\(name))", configuration: step) { benchmark in
            onMainActor(with: benchmark) { benchmark in
                guard let fixture = rawFixture else { fatalError("setup did not run") }
                let source = fixture.staged.library(of: fixture.plugin)
                var copies = 0
                measure(benchmark) {
                    for _ in benchmark.scaledIterations {
                        copies += 1
                        let target = (fixture.staged.raw as NSString).appendingPathComponent("copy-\(copies)")
                        do {
                            try FileManager.default.copyItem(atPath: source, toPath: target)
                            try FileManager.default.removeItem(atPath: target)
                        } catch {
                            fatalError("copy of \(source) failed: \(error)")
                        }
                    }
                }
            }
        } setup: {
            try onMainActor { rawFixture = try RawFixture(plugin) }
        } teardown: {
            onMainActor { rawFixture?.tearDown(); rawFixture = nil }
        }
    }

    registerHostBenchmarks()
    registerIsolationBenchmarks()
    registerResolveBenchmarks()
    registerTerminalUIBenchmarks()
    registerLaneBenchmarks()
    registerRenderLaneBenchmarks()
    registerReloadLaneBenchmarks()
    registerBusyPluginBenchmarks()
    registerContractBenchmarks()
    registerHopBenchmarks()
}
