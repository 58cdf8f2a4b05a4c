import Benchmark
@_spi(Engine) import BerthRuntime
import CBerth
import Foundation
import Swinject
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

// Host benchmarks: screens, reload with screens open, route context, rendering, state and
// scopes. As in LoaderBenchmarks.swift, each Berth figure has a baseline measured in the
// same run, and Docs/benchmarks.md reports the ratio. Nothing here is asserted by a test.

extension ExamplePlugin {
    static let stress = ExamplePlugin(
        manifestFile: "stress.json", id: "org.berth.stress", library: "libBerthStress.so", entry: "berth_stress_entry_v1"
    )
}

/// A host with plugins loaded and, optionally, screens open.
@MainActor
final class ScreenFixture {
    let staged: StagedPlugins
    let host: BerthHost

    /// `group`: every plugin's manifest names that worker group. `confinesWorkers` off: the
    /// workers run unsandboxed (P12's floor).
    convenience init(_ plugins: [ExamplePlugin], isolation: IsolationMode = .inProcess, group: String? = nil,
                     confinesWorkers: Bool = true) throws {
        try self.init(staged: StagedPlugins(plugins, group: group), plugins, isolation: isolation, confinesWorkers: confinesWorkers)
    }

    /// Over plugins staged (and perhaps changed) by the caller.
    init(staged: StagedPlugins, _ plugins: [ExamplePlugin], isolation: IsolationMode = .inProcess, confinesWorkers: Bool = true) throws {
        self.staged = staged
        host = try staged.makeHost(isolation: isolation, confinesWorkers: confinesWorkers)
        for plugin in plugins { try host.load(plugin.id) }
    }

    func tearDown() {
        host.shutdown()
        staged.remove()
    }
}

@MainActor var screenFixture: ScreenFixture?

/// Counter's create/destroy called straight through its table, as a bare C host would:
/// the floor under the host's open/close.
@MainActor
final class BareCreateDestroy {
    let staged: StagedPlugins
    let table: UnsafePointer<berth_plugin_v1>
    let host: UnsafeMutablePointer<berth_host_v1>

    init() throws {
        staged = try StagedPlugins([.counter])
        let path = staged.library(of: .counter)
        guard let image = dlopen(path, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE), let entry = dlsym(image, ExamplePlugin.counter.entry) else {
            fatalError("cannot open \(path)")
        }
        host = Self.makeHost()
        table = Self.table(entry: entry, host: host)
    }

    /// A host table with nothing in it but its header: create/destroy need no service.
    static func makeHost() -> UnsafeMutablePointer<berth_host_v1> {
        let host = UnsafeMutablePointer<berth_host_v1>.allocate(capacity: 1)
        host.initialize(to: berth_host_v1())
        host.pointee.struct_size = UInt32(MemoryLayout<berth_host_v1>.size)
        host.pointee.abi_version = (UInt32(BERTH_ABI_VERSION_MAJOR) << 16) | UInt32(BERTH_ABI_VERSION_MINOR)
        return host
    }

    /// The plugin's table from its entry point, called with the bare host.
    static func table(entry: UnsafeMutableRawPointer, host: UnsafePointer<berth_host_v1>) -> UnsafePointer<berth_plugin_v1> {
        let call = unsafeBitCast(entry, to: (@convention(c) (UnsafePointer<berth_host_v1>?, OpaquePointer?) -> UnsafePointer<berth_plugin_v1>?).self)
        guard let table = call(host, nil) else { fatalError("the Counter entry refused the bare host") }
        return table
    }

    func createAndDestroy() { Self.createAndDestroy(table) }

    static func createAndDestroy(_ table: UnsafePointer<berth_plugin_v1>) {
        var instance: UnsafeMutableRawPointer?
        var error = berth_error()
        error.struct_size = UInt32(MemoryLayout<berth_error>.size)
        _ = table.pointee.create?(nil, "counter", berth_bytes(data: nil, length: 0), &instance, &error)
        table.pointee.destroy?(instance)
    }
}

/// P2's floor: a fresh image of Counter loaded raw (copy, dlopen, dlsym) and its three
/// screens made and ended bare, with nothing of the host in between.
@MainActor
final class RawReloadFloor {
    let raw: RawFixture
    let host = BareCreateDestroy.makeHost()

    init() throws { raw = try RawFixture(.counter) }

    func reload() {
        guard let entry = raw.loader.loadAndKeepSwift(entry: raw.plugin.entry) else { fatalError("no entry") }
        let table = BareCreateDestroy.table(entry: entry, host: host)
        for _ in 0..<3 { BareCreateDestroy.createAndDestroy(table) }
    }
}

@MainActor var rawReloadFloor: RawReloadFloor?

/// P6's floor: what any dispatch up a 10-level stack with observers at three levels does,
/// written bare: a walk from the top node to the root through parent links, calling each
/// node's observers on the way.
final class WalkNode {
    let parent: WalkNode?
    let observers: [(String, [UInt8]) -> Void]

    init(parent: WalkNode?, observers: [(String, [UInt8]) -> Void]) {
        self.parent = parent
        self.observers = observers
    }

    /// Ten nodes, with one observer at the levels P6's benchmark observes (1, 4, 8): the top.
    static func stack(observer: @escaping (String, [UInt8]) -> Void) -> WalkNode {
        var top: WalkNode?
        for level in 0..<10 {
            top = WalkNode(parent: top, observers: [1, 4, 8].contains(level) ? [observer] : [])
        }
        return top!
    }

    @inline(never)
    func dispatch(_ key: String, _ payload: [UInt8]) {
        var node: WalkNode? = self
        while let current = node {
            for observer in current.observers { observer(key, payload) }
            node = current.parent
        }
    }
}

@MainActor var bareFixture: BareCreateDestroy?

/// The floor of closing a screen whose task is asleep: waking a thread that sleeps on a
/// condition and waiting until it answers, as a close cancels a task's `task_sleep` and
/// waits for its body (the same yield-then-block wait as `ManagedTask`). On a VM whose idle
/// vCPUs halt, this wake is most of what an open+close costs beyond the host's own work.
final class WakeRoundTrip: @unchecked Sendable {
    // @unchecked: `asked` and `running` are guarded by `condition`; `answered` is atomic.
    private let condition = NSCondition()
    private var asked = 0
    private let answered = Atomic<Int>(0)
    private var running = true

    init() {
        Thread { [self] in
            condition.lock()
            var seen = 0
            while true {
                while asked == seen && running { condition.wait() }
                guard running else { break }
                seen = asked
                answered.store(seen, ordering: .releasing)
                condition.broadcast()
            }
            condition.unlock()
        }.start()
    }

    func roundTrip() {
        condition.lock()
        asked += 1
        let ask = asked
        condition.unlock()
        condition.signal()
        let spinUntil = ContinuousClock.now + .microseconds(50)
        while answered.load(ordering: .acquiring) != ask && ContinuousClock.now < spinUntil { sched_yield() }
        guard answered.load(ordering: .acquiring) != ask else { return }
        condition.lock()
        while answered.load(ordering: .acquiring) != ask { condition.wait() }
        condition.unlock()
    }

    func stop() {
        condition.lock()
        running = false
        condition.unlock()
        condition.broadcast()
    }
}

@MainActor var wakeFixture: WakeRoundTrip?

/// A scoped service type for the scope benchmarks (ours and Swinject's).
final class ScopedThing: Sendable {}

/// The state of the context benchmarks.
@MainActor
final class ContextFixture {
    let fixture: ScreenFixture
    var screens: [Router] = []
    var calls = 0
    let observer: (String, [UInt8]) -> Void

    init() throws {
        fixture = try ScreenFixture([.greeter])
        var calls = 0
        observer = { _, payload in calls &+= payload.count }
        _ = calls
    }
}

@MainActor var contextFixture: ContextFixture?

func registerHostBenchmarks() {
    let perOperation = Benchmark.Configuration(
        metrics: [.wallClock, .cpuTotal, .processCPU, .mallocCountTotal], warmupIterations: 5,
        scalingFactor: .kilo, maxDuration: .seconds(5), maxIterations: 1_000
    ).tuned()
    let perIteration = Benchmark.Configuration(
        metrics: [.wallClock, .processCPU, .mallocCountTotal, .peakMemoryResident], warmupIterations: 5,
        scalingFactor: .one, maxDuration: .seconds(10), maxIterations: 10_000
    ).tuned(countedIterations: 20)

    // MARK: Open + close of a screen vs the bare ABI create/destroy

    Benchmark("open+close screen (Counter, host)", configuration: perIteration) { benchmark in
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
        try onMainActor { screenFixture = try ScreenFixture([.counter]) }
    } teardown: {
        onMainActor { screenFixture?.tearDown(); screenFixture = nil }
    }

    // P7's floor: what an open+close cannot do without, timed the way P7 is (one per
    // iteration): the plugin's create and destroy called bare, and one wake round trip
    // with a sleeping thread, the least that closing a screen with a sleeping task costs.
    Benchmark("bare create+destroy + one thread wake round trip (Counter)", configuration: perIteration) { benchmark in
        onMainActor(with: benchmark) { benchmark in
            guard let bare = bareFixture, let wake = wakeFixture else { fatalError("setup did not run") }
            measure(benchmark) {
                bare.createAndDestroy()
                wake.roundTrip()
            }
        }
    } setup: {
        try onMainActor {
            bareFixture = try BareCreateDestroy()
            wakeFixture = WakeRoundTrip()
        }
    } teardown: {
        onMainActor {
            bareFixture?.staged.remove()
            bareFixture = nil
            wakeFixture?.stop()
            wakeFixture = nil
        }
    }

    // MARK: Reload with 3 open screens vs the copy + dlopen + dlsym floor

    // The first 100 reloads of a process (P2), before retired Swift images pile up.
    Benchmark("reload with 3 open screens (Counter)", configuration: Benchmark.Configuration(
        metrics: [.wallClock, .processCPU, .mallocCountTotal, .peakMemoryResident], warmupIterations: 0,
        scalingFactor: .one, maxDuration: .seconds(20), maxIterations: 100
    ).tuned()) { benchmark in
        onMainActor(with: benchmark) { benchmark in
            guard let host = screenFixture?.host else { fatalError("setup did not run") }
            measure(benchmark) {
                do { blackHole(try host.reload(ExamplePlugin.counter.id)) } catch { fatalError("\(error)") }
            }
        }
    } setup: {
        try onMainActor {
            let fixture = try ScreenFixture([.counter])
            for _ in 0..<3 { _ = try fixture.host.push("com.example.counter/counter") }
            screenFixture = fixture
        }
    } teardown: {
        onMainActor { screenFixture?.tearDown(); screenFixture = nil }
    }

    // P2's floor, timed as P2 is: the first 100 of a process.
    Benchmark("raw copy+dlopen+dlsym + 3 bare create+destroy, first 100 (Counter)", configuration: Benchmark.Configuration(
        metrics: [.wallClock, .processCPU, .mallocCountTotal, .peakMemoryResident], warmupIterations: 0,
        scalingFactor: .one, maxDuration: .seconds(20), maxIterations: 100
    ).tuned()) { benchmark in
        onMainActor(with: benchmark) { benchmark in
            guard let floor = rawReloadFloor else { fatalError("setup did not run") }
            measure(benchmark) { floor.reload() }
        }
    } setup: {
        try onMainActor { rawReloadFloor = try RawReloadFloor() }
    } teardown: {
        onMainActor { rawReloadFloor?.raw.tearDown(); rawReloadFloor = nil }
    }

    // MARK: Route context: dispatch through 10 levels, terminate popping 5

    Benchmark("context dispatch, 10 deep, observers at 3 levels", configuration: perOperation) { benchmark in
        onMainActor(with: benchmark) { benchmark in
            guard let context = contextFixture, let top = context.screens.last else { fatalError("setup did not run") }
            let payload = Array("{\"id\":\"ada\"}".utf8)
            measure(benchmark) {
                for _ in benchmark.scaledIterations {
                    blackHole(context.fixture.host.sendContext("bench.Selection", payload: payload, from: top))
                }
            }
        }
    } setup: {
        try onMainActor {
            let context = try ContextFixture()
            for _ in 0..<10 { context.screens.append(try context.fixture.host.push("com.example.greeter/hello")) }
            for level in [1, 4, 8] {
                context.fixture.host.addContextObserver("bench.Selection", on: context.screens[level], context.observer)
            }
            contextFixture = context
        }
    } teardown: {
        onMainActor { contextFixture?.fixture.tearDown(); contextFixture = nil }
    }

    Benchmark("bare observer calls (3)", configuration: perOperation) { benchmark in
        onMainActor(with: benchmark) { benchmark in
            var total = 0
            let observers: [(String, [UInt8]) -> Void] = (0..<3).map { _ in { _, payload in total &+= payload.count } }
            let payload = Array("{\"id\":\"ada\"}".utf8)
            measure(benchmark) {
                for _ in benchmark.scaledIterations {
                    for observer in observers { observer("bench.Selection", payload) }
                }
            }
            blackHole(total)
        }
    }

    // P6's floor: the same three observer calls, reached by a bare 10-level parent walk.
    Benchmark("bare observer calls (3) + 10-level parent walk", configuration: perOperation) { benchmark in
        onMainActor(with: benchmark) { benchmark in
            var total = 0
            let top = WalkNode.stack { _, payload in total &+= payload.count }
            let payload = Array("{\"id\":\"ada\"}".utf8)
            measure(benchmark) {
                for _ in benchmark.scaledIterations { top.dispatch("bench.Selection", payload) }
            }
            blackHole(total)
        }
    }

    Benchmark("terminate popping 5 screens", configuration: Benchmark.Configuration(
        metrics: [.wallClock, .processCPU, .mallocCountTotal], warmupIterations: 10,
        scalingFactor: .one, maxDuration: .seconds(10), maxIterations: 2_000
    ).tuned()) { benchmark in
        onMainActor(with: benchmark) { benchmark in
            guard let context = contextFixture else { fatalError("setup did not run") }
            let host = context.fixture.host
            // Unmeasured: five screens above the anchor.
            var top: Router?
            do { for _ in 0..<5 { top = try host.push("com.example.greeter/hello") } } catch { fatalError("\(error)") }
            guard let sender = top else { return }
            measure(benchmark) {
                blackHole(host.terminate("bench.Selection", payload: [], from: sender))
            }
        }
    } setup: {
        try onMainActor {
            let context = try ContextFixture()
            let anchor = try context.fixture.host.push("com.example.greeter/hello")
            context.fixture.host.addContextObserver("bench.Selection", on: anchor, context.observer)
            contextFixture = context
        }
    } teardown: {
        onMainActor { contextFixture?.fixture.tearDown(); contextFixture = nil }
    }

    // MARK: Rendering and state

    Benchmark("render pass, 10,000 stateful views (GC included)", configuration: Benchmark.Configuration(
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
            let fixture = try ScreenFixture([.stress])
            _ = try fixture.host.push("org.berth.stress/grid", argument: Array("10000".utf8))
            screenFixture = fixture
        }
    } teardown: {
        onMainActor { screenFixture?.tearDown(); screenFixture = nil }
    }

    Benchmark("state slot read+write (host StateStorage)", configuration: perOperation) { benchmark in
        onMainActor(with: benchmark) { benchmark in
            let storage = StateStorage()
            for index in 0..<1_000 { storage.write(identity: "Grid/List.0/ForEach.\(index).0/Cell", index: 0, fingerprint: 7, bytes: [1, 0, 0, 0, 0, 0, 0, 0]) }
            let identities = (0..<1_000).map { "Grid/List.0/ForEach.\($0).0/Cell" }
            var sum = 0
            measure(benchmark) {
                for iteration in benchmark.scaledIterations {
                    let identity = identities[iteration % 1_000]
                    sum &+= storage.read(identity: identity, index: 0, fingerprint: 7)?.count ?? 0
                    storage.write(identity: identity, index: 0, fingerprint: 7, bytes: [2, 0, 0, 0, 0, 0, 0, 0])
                }
            }
            blackHole(sum)
        }
    }

    Benchmark("plain dictionary read+write", configuration: perOperation) { benchmark in
        var dictionary: [String: [UInt8]] = [:]
        let identities = (0..<1_000).map { "Grid/List.0/ForEach.\($0).0/Cell" }
        for identity in identities { dictionary[identity] = [1, 0, 0, 0, 0, 0, 0, 0] }
        var sum = 0
        measure(benchmark) {
            for iteration in benchmark.scaledIterations {
                let identity = identities[iteration % 1_000]
                sum &+= dictionary[identity]?.count ?? 0
                dictionary[identity] = [2, 0, 0, 0, 0, 0, 0, 0]
            }
        }
        blackHole(sum)
    }

    // P5's floor: the state a render pass of 10,000 views reads and writes, as 10,000 reads
    // and writes of a dictionary keyed by the same identities.
    Benchmark("10,000 dictionary reads+writes", configuration: Benchmark.Configuration(
        metrics: [.wallClock, .processCPU, .mallocCountTotal], warmupIterations: 3,
        scalingFactor: .one, maxDuration: .seconds(20), maxIterations: 200
    ).tuned()) { benchmark in
        let identities = (0..<10_000).map { "Grid/List.0/ForEach.\($0).0/Cell" }
        var dictionary: [String: [UInt8]] = [:]
        for identity in identities { dictionary[identity] = [1, 0, 0, 0, 0, 0, 0, 0] }
        var sum = 0
        measure(benchmark) {
            for identity in identities {
                sum &+= dictionary[identity]?.count ?? 0
                dictionary[identity] = [2, 0, 0, 0, 0, 0, 0, 0]
            }
        }
        blackHole(sum)
    }

    // MARK: Scopes: a cached resolve, a request scope, Swinject, a dictionary

    Benchmark("scope resolve, cached (Berth, session scope)", configuration: perOperation) { benchmark in
        let registry = ScopeRegistry()
        do { try registry.registerScoped(ScopedThing.self, scope: .session) { ScopedThing() } } catch { fatalError("\(error)") }
        registry.beginSession("bench")
        measure(benchmark) {
            for _ in benchmark.scaledIterations {
                do { blackHole(try registry.resolve(ScopedThing.self)) } catch { fatalError("\(error)") }
            }
        }
    }

    Benchmark("request scope enter+resolve+leave (Berth)", configuration: perOperation) { benchmark in
        let registry = ScopeRegistry()
        do { try registry.registerScoped(ScopedThing.self, scope: .request) { ScopedThing() } } catch { fatalError("\(error)") }
        measure(benchmark) {
            for _ in benchmark.scaledIterations {
                registry.withRequestScope {
                    do { blackHole(try registry.resolve(ScopedThing.self)) } catch { fatalError("\(error)") }
                }
            }
        }
    }

    Benchmark("Swinject resolve (container scope)", configuration: perOperation) { benchmark in
        let container = Container()
        container.register(ScopedThing.self) { _ in ScopedThing() }.inObjectScope(.container)
        measure(benchmark) {
            for _ in benchmark.scaledIterations { blackHole(container.resolve(ScopedThing.self)) }
        }
    }

    Benchmark("plain dictionary lookup of an instance", configuration: perOperation) { benchmark in
        let instances: [ObjectIdentifier: AnyObject] = [ObjectIdentifier(ScopedThing.self): ScopedThing()]
        measure(benchmark) {
            for _ in benchmark.scaledIterations { blackHole(instances[ObjectIdentifier(ScopedThing.self)]) }
        }
    }
}
