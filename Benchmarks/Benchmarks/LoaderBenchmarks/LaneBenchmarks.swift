import Benchmark
@_spi(Engine) import BerthRuntime
import BerthTerminalUI
import Foundation

// Lanes (issue 39): the host never waits on a plugin. R1 is a key press on screen B (Counter,
// in a worker) until its frame is written, while plugin A (the stress fixture's pool screen,
// in another worker) is inside 1.5 s actions one after another, against the same key press
// with A idle.

/// A host with Counter visible (B) under a front end on an 80×24 terminal, and a plugin A
/// that a fixture keeps busy (R1, R3, R4): the measure is `+` on B until its frame is written.
@MainActor
protocol KeyPressFixture: AnyObject {
    var app: TerminalApp { get }
    /// Waits until A is busy (so the measured key presses overlap its work).
    func waitUntilPluginAIsBusy() async
    func tearDown() async
}

extension KeyPressFixture {
    /// `+` steps Counter's focused stepper: view input on B's lane, render, frame, one write.
    func pressPlus() async {
        app.handleNow(.key(.character("+")))
        await app.laneOperationsReturned()
        app.draw()
    }
}

@MainActor private var keyPressFixture: (any KeyPressFixture)?

/// Registers the pair: the key press with A busy (`make(true)` starts A's work), and with A idle.
func registerKeyPressBenchmarks(busy: String, idle: String, make: @escaping @MainActor (_ busy: Bool) throws -> any KeyPressFixture) {
    let perIteration = Benchmark.Configuration(
        metrics: [.wallClock, .processCPU], warmupIterations: 5,
        scalingFactor: .one, maxDuration: .seconds(10), maxIterations: 2_000
    ).tuned(countedIterations: 20)

    for isBusy in [true, false] {
        Benchmark(isBusy ? busy : idle, configuration: perIteration) { benchmark in
            onMainActorAsync(with: benchmark) { benchmark in
                guard let fixture = keyPressFixture else { fatalError("setup did not run") }
                if isBusy { await fixture.waitUntilPluginAIsBusy() }
                await measure(benchmark) {
                    for _ in benchmark.scaledIterations { await fixture.pressPlus() }
                }
            }
        } setup: {
            try onMainActor { keyPressFixture = try make(isBusy) }
        } teardown: {
            onMainActorAsync {
                await keyPressFixture?.tearDown()
                keyPressFixture = nil
            }
        }
    }
}

/// Counter over the stress pool screen, both in workers: the visible screen is Counter (B);
/// the pool screen under it is A.
@MainActor
final class LaneFixture: KeyPressFixture {
    let fixture: ScreenFixture
    let app: TerminalApp
    private let busyScreen: Int
    private var keepBusy: Task<Void, Never>?

    init() throws {
        fixture = try ScreenFixture([.stress, .counter], isolation: .process)
        busyScreen = try fixture.host.push("org.berth.stress/pool").id
        _ = try fixture.host.push("com.example.counter/counter")
        app = TerminalApp(host: fixture.host, screen: CountingScreen(width: 80, height: 24))
        app.draw()
    }

    /// Keeps A inside 1.5 s actions, each sent as soon as the last returned.
    func keepPluginABusy() {
        let (host, screen) = (fixture.host, busyScreen)
        keepBusy = Task { @MainActor in
            while !Task.isCancelled { _ = try? await host.send(screen: screen, action: "sleep", payload: Array("1500".utf8)) }
        }
    }

    /// Waits until A is inside an action.
    func waitUntilPluginAIsBusy() async {
        while fixture.host.screen(busyScreen)?.busy != true { try? await Task.sleep(for: .milliseconds(1)) }
    }

    func tearDown() async {
        keepBusy?.cancel()
        await keepBusy?.value
        app.detach()
        fixture.tearDown()
    }
}

func registerLaneBenchmarks() {
    registerKeyPressBenchmarks(busy: "key press on screen B while plugin A is inside an action (lanes)",
                               idle: "the same key press with plugin A idle") { busy in
        let lanes = try LaneFixture()
        if busy { lanes.keepPluginABusy() }
        return lanes
    }
}
