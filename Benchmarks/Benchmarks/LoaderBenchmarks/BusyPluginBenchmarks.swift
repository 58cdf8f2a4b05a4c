import Benchmark
@_spi(Engine) import BerthRuntime
import Foundation

// Lanes (issue 39), two more rows.
//
// R2: `status` over the control socket of a real `berth run` (the binary, built beside this
// benchmark), while plugin A (the stress fixture's pool screen, in a worker) is inside 1.5 s
// actions one after another, sent by a second client; against the same `status` with A idle.
//
// P14: an in-process action through its lane (Counter's increment, with the render after it
// on the main actor), against the bare round trip it is built on: the main actor hands an
// empty job to a thread of its own, which resumes the main actor's continuation.

// MARK: R2

/// A `berth run` child with a control socket, over the stress fixture in a worker.
final class ControlSocketHost: @unchecked Sendable {
    let staged: StagedPlugins
    let socket: String
    private let process = Process()
    private let keepBusy = LockedFlag()

    init() throws {
        staged = try StagedPlugins([.stress])
        socket = (staged.root as NSString).appendingPathComponent("control.sock")
        process.executableURL = URL(fileURLWithPath: BuildProducts.library("berth"))
        process.arguments = ["run", "--plugins", staged.plugins, "--socket", socket, "--isolation", "process",
                             "--state-dir", (staged.root as NSString).appendingPathComponent("state")]
        var environment = ProcessInfo.processInfo.environment
        environment["XDG_RUNTIME_DIR"] = staged.runtimeBase
        process.environment = environment
        // A host serving a socket it was asked for outlives its input.
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        let deadline = Date().addingTimeInterval(30)
        while (try? ControlClientForBench(socket: socket).request(["status"])) == nil {
            guard Date() < deadline, process.isRunning else { fatalError("berth run did not answer at \(socket)") }
            usleep(20_000)
        }
    }

    /// A second client opens A's screen and keeps it inside 1.5 s actions until `tearDown`.
    func keepPluginABusy() throws {
        let client = try ControlClientForBench(socket: socket)
        _ = try client.request(["open", "org.berth.stress/pool"])
        keepBusy.set(true)
        let thread = Thread { [keepBusy] in
            while keepBusy.value, (try? client.request(["send", "sleep", "1500"])) != nil {}
        }
        thread.start()
        // Until `status` names the busy call.
        let watcher = try ControlClientForBench(socket: socket)
        let deadline = Date().addingTimeInterval(30)
        while !((try? watcher.request(["status"])) ?? "").contains("busy: org.berth.stress/pool") {
            guard Date() < deadline else { fatalError("status never named plugin A's action") }
            usleep(5_000)
        }
        watcher.close()
    }

    func tearDown() {
        keepBusy.set(false)
        process.terminate()
        process.waitUntilExit()
        staged.remove()
    }
}

/// The control protocol's client side, as `berth status` speaks it: a 4-byte big-endian
/// length, then JSON; the token file's secret first.
final class ControlClientForBench: @unchecked Sendable {
    private var descriptor: Int32

    init(socket path: String) throws {
        descriptor = Glibc.socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { buffer in
            let bytes = Array(path.utf8)
            buffer.copyBytes(from: bytes)
            buffer[bytes.count] = 0
        }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard connected == 0 else {
            close()
            throw CocoaError(.fileReadNoSuchFile)
        }
        let token = (try? String(contentsOfFile: path + ".token", encoding: .utf8)) ?? ""
        try write(["token": token])
    }

    /// One request and its reply's output lines, joined.
    func request(_ args: [String]) throws -> String {
        try write(["args": args])
        var header = [UInt8](repeating: 0, count: 4)
        try readExactly(&header)
        var body = [UInt8](repeating: 0, count: header.reduce(0) { Int($0) << 8 | Int($1) })
        try readExactly(&body)
        let reply = try JSONSerialization.jsonObject(with: Data(body)) as? [String: Any]
        return ((reply?["output"] as? [String]) ?? []).joined(separator: "\n")
    }

    func close() {
        if descriptor >= 0 { _ = Glibc.close(descriptor) }
        descriptor = -1
    }

    deinit { close() }

    private func write(_ object: [String: Any]) throws {
        let payload = Array(try JSONSerialization.data(withJSONObject: object))
        let frame = withUnsafeBytes(of: UInt32(payload.count).bigEndian, Array.init) + payload
        guard send(descriptor, frame, frame.count, Int32(MSG_NOSIGNAL)) == frame.count else { throw CocoaError(.fileWriteUnknown) }
    }

    private func readExactly(_ bytes: inout [UInt8]) throws {
        var received = 0
        while received < bytes.count {
            let count = bytes.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress! + received, $0.count - received, 0) }
            guard count > 0 else { throw CocoaError(.fileReadUnknown) }
            received += count
        }
    }
}

/// A flag two threads share.
final class LockedFlag: @unchecked Sendable {
    private let lock = NSLock()
    private var stored = false
    var value: Bool { lock.withLock { stored } }
    func set(_ value: Bool) { lock.withLock { stored = value } }
}

nonisolated(unsafe) var controlSocketHost: ControlSocketHost?
nonisolated(unsafe) var statusClient: ControlClientForBench?

// MARK: P14

/// The floor's thread: waits for a job, runs it; no bookkeeping.
final class BareHopThread: SerialExecutor, @unchecked Sendable {
    private let condition = NSCondition()
    private var jobs: [UnownedJob] = []
    private var ended = false
    private var hop: BareHop!

    init() {
        hop = BareHop(thread: self)
        let thread = Thread { [self] in
            while true {
                condition.lock()
                while jobs.isEmpty && !ended { condition.wait() }
                if jobs.isEmpty { condition.unlock(); return }
                let job = jobs.removeFirst()
                condition.unlock()
                job.runSynchronously(on: asUnownedSerialExecutor())
            }
        }
        thread.start()
    }

    func enqueue(_ job: consuming ExecutorJob) {
        condition.lock()
        jobs.append(UnownedJob(job))
        condition.signal()
        condition.unlock()
    }

    /// Runs `job` on the thread; the caller is suspended meanwhile and goes straight back to
    /// its own actor after (an actor call: the fastest way there and back Swift has).
    func run(isolation caller: isolated (any Actor)? = #isolation, _ job: @escaping @Sendable () -> Void) async {
        await hop.call(job)
    }

    func end() {
        condition.lock()
        ended = true
        condition.signal()
        condition.unlock()
    }
}

/// An actor whose executor is a `BareHopThread`.
actor BareHop {
    unowned let thread: BareHopThread
    nonisolated var unownedExecutor: UnownedSerialExecutor { thread.asUnownedSerialExecutor() }

    init(thread: BareHopThread) {
        self.thread = thread
    }

    /// Touched by each call, as the lane's actor does: the hop is never optimized away.
    private var calls = 0

    func call(_ job: @Sendable () -> Void) {
        calls &+= 1
        job()
    }
}

nonisolated(unsafe) var bareHopThread: BareHopThread?

extension ExamplePlugin {
    /// The C fixture's render_tree table (Tests/Fixtures/BerthFixtures/fixtures.c): its
    /// action "bump" returns at once and its render writes an empty tree.
    static let idleFixture = cFixture(id: "org.berth.fixtures", name: "Fixtures", library: "libBerthFixtures.so",
                                      entry: "fixture_entry_render_tree", routes: ["probe"])
}

func registerBusyPluginBenchmarks() {
    let perIteration = Benchmark.Configuration(
        metrics: [.wallClock, .processCPU], warmupIterations: 10,
        scalingFactor: .one, maxDuration: .seconds(10), maxIterations: 2_000
    ).tuned(countedIterations: 20)

    for busy in [true, false] {
        let name = busy ? "status over the control socket while plugin A is inside an action (lanes)" : "the same status with plugin A idle"
        Benchmark(name, configuration: perIteration) { benchmark in
            guard let client = statusClient else { fatalError("setup did not run") }
            measure(benchmark) {
                for _ in benchmark.scaledIterations { blackHole(try? client.request(["status"])) }
            }
        } setup: {
            let host = try ControlSocketHost()
            if busy { try host.keepPluginABusy() }
            controlSocketHost = host
            statusClient = try ControlClientForBench(socket: host.socket)
        } teardown: {
            statusClient?.close()
            statusClient = nil
            controlSocketHost?.tearDown()
            controlSocketHost = nil
        }
    }

    let perRoundTrip = Benchmark.Configuration(
        metrics: [.wallClock, .processCPU], warmupIterations: 10,
        scalingFactor: .kilo, maxDuration: .seconds(5), maxIterations: 1_000
    ).tuned(countedIterations: 20)

    // P14: a plugin that does nothing, so the figure is what the lane adds to a bare hop (the
    // bookkeeping on both sides of it, the check and commit of a tree), not a plugin's own
    // work. P14-counter: Counter, whose Swift render is about 40 % of its instructions.
    for (name, plugin, route, action): (String, ExamplePlugin, Route, String) in [("in-process action through its lane (C fixture, no work)", .idleFixture, "org.berth.fixtures/probe", "bump"),
                                          ("in-process action through its lane (Counter increment)", .counter, "com.example.counter/counter", "increment")] {
        Benchmark(name, configuration: perRoundTrip) { benchmark in
            onMainActorAsync(with: benchmark) { benchmark in
                guard let host = screenFixture?.host, let screen = host.visibleRouter?.id else { fatalError("setup did not run") }
                await measure(benchmark) {
                    for _ in benchmark.scaledIterations {
                        do { try await host.send(screen: screen, action: action, payload: []) } catch { fatalError("\(error)") }
                    }
                }
            }
        } setup: {
            try onMainActor {
                let fixture = try ScreenFixture([plugin], isolation: .inProcess)
                _ = try fixture.host.push(route)
                screenFixture = fixture
            }
        } teardown: {
            onMainActor { screenFixture?.tearDown(); screenFixture = nil }
        }
    }

    Benchmark("bare thread-hop round trip (main actor → thread → main actor)", configuration: perRoundTrip) { benchmark in
        onMainActorAsync(with: benchmark) { benchmark in
            guard let thread = bareHopThread else { fatalError("setup did not run") }
            await measure(benchmark) {
                for _ in benchmark.scaledIterations { await thread.run {} }
            }
        }
    } setup: {
        bareHopThread = BareHopThread()
    } teardown: {
        bareHopThread?.end()
        bareHopThread = nil
    }
}
