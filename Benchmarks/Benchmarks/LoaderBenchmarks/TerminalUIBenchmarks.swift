import Benchmark
@_spi(Engine) import BerthRuntime
import BerthTerminalUI
import Foundation

// The terminal front end (issue 32, Deliver 10): a key press on a 1,000-view screen until the
// frame is written, against the same input and render without the front end (T1); a redraw
// of an unchanged 200×60 screen, which writes nothing (T2, bytes written noted); drawing the
// 10,000-view stress screen whole (T3, information). In process, like the host benchmarks.

/// A terminal that keeps nothing of what it is sent but the byte count.
@MainActor
final class CountingScreen: TerminalScreen {
    let size: (width: Int, height: Int)
    private(set) var bytesWritten = 0

    init(width: Int, height: Int) {
        size = (width, height)
    }

    func write(_ bytes: [UInt8]) {
        bytesWritten += bytes.count
    }
}

/// The stress plugin's grid of `rows` rows open in a host, with a front end on a terminal of
/// `width` × `height`.
@MainActor
final class FrontEndFixture {
    let fixture: ScreenFixture
    let screen: CountingScreen
    let app: TerminalApp
    /// The identity of the first row's button (the focused view).
    let firstRow: String

    init(rows: Int, width: Int = 80, height: Int = 24) throws {
        fixture = try ScreenFixture([.stress])
        _ = try fixture.host.push("org.berth.stress/grid", argument: Array(String(rows).utf8))
        screen = CountingScreen(width: width, height: height)
        app = TerminalApp(host: fixture.host, screen: screen)
        app.draw()
        guard let first = fixture.host.visibleScreen?.tree?.firstNode(where: { $0.type == "Button" })?.id else {
            fatalError("the grid rendered no button")
        }
        firstRow = first
    }

    func tearDown() {
        app.detach()
        fixture.tearDown()
    }
}

@MainActor var frontEndFixture: FrontEndFixture?

/// Notes a line for scripts/bench to print under its table (`BERTH_BENCH_NOTES`).
func benchNote(_ line: String) {
    guard let path = BenchRequest.environment["BERTH_BENCH_NOTES"], let file = fopen(path, "a") else { return }
    fputs(line + "\n", file)
    fclose(file)
}

func registerTerminalUIBenchmarks() {
    let perIteration = Benchmark.Configuration(
        metrics: [.wallClock, .processCPU, .mallocCountTotal], warmupIterations: 5,
        scalingFactor: .one, maxDuration: .seconds(10), maxIterations: 2_000
    ).tuned(countedIterations: 20)

    // MARK: T1: a key press on 1,000 views, against the same input and render alone

    Benchmark("key press on a 1,000-view screen until the frame is written (front end)", configuration: perIteration) { benchmark in
        onMainActorAsync(with: benchmark) { benchmark in
            guard let front = frontEndFixture else { fatalError("setup did not run") }
            await measure(benchmark) {
                // Enter taps the focused first row's button: input on the plugin's lane,
                // render, frame, one write.
                for _ in benchmark.scaledIterations {
                    front.app.handleNow(.key(.enter))
                    await front.app.laneOperationsReturned()
                    front.app.draw()
                }
            }
        }
    } setup: {
        try onMainActor { frontEndFixture = try FrontEndFixture(rows: 1_000) }
    } teardown: {
        onMainActor { frontEndFixture?.tearDown(); frontEndFixture = nil }
    }

    Benchmark("the same input and render without the front end (1,000 views)", configuration: perIteration) { benchmark in
        onMainActorAsync(with: benchmark) { benchmark in
            guard let front = frontEndFixture else { fatalError("setup did not run") }
            let host = front.fixture.host
            await measure(benchmark) {
                for _ in benchmark.scaledIterations {
                    do { blackHole(try await host.input(.tap, view: front.firstRow)) } catch { fatalError("\(error)") }
                }
            }
        }
    } setup: {
        try onMainActor { frontEndFixture = try FrontEndFixture(rows: 1_000) }
    } teardown: {
        onMainActor { frontEndFixture?.tearDown(); frontEndFixture = nil }
    }

    // MARK: T2: an unchanged 200×60 screen drawn again writes nothing

    Benchmark("redraw of an unchanged 200×60 screen (front end)", configuration: perIteration) { benchmark in
        onMainActor(with: benchmark) { benchmark in
            guard let front = frontEndFixture else { fatalError("setup did not run") }
            let before = front.screen.bytesWritten
            measure(benchmark) {
                for _ in benchmark.scaledIterations { front.app.draw() }
            }
            benchNote("T2: bytes written by \(benchmark.scaledIterations.count) redraw(s) of an unchanged 200×60 screen: \(front.screen.bytesWritten - before)")
        }
    } setup: {
        try onMainActor { frontEndFixture = try FrontEndFixture(rows: 1_000, width: 200, height: 60) }
    } teardown: {
        onMainActor { frontEndFixture?.tearDown(); frontEndFixture = nil }
    }

    Benchmark("comparison of two equal 200×60 frames", configuration: perIteration) { benchmark in
        onMainActor(with: benchmark) { benchmark in
            guard let front = frontEndFixture, let frame = front.app.rendered?.frame else { fatalError("setup did not run") }
            let copy = frame
            measure(benchmark) {
                for _ in benchmark.scaledIterations { blackHole(frame == copy) }
            }
        }
    } setup: {
        try onMainActor { frontEndFixture = try FrontEndFixture(rows: 1_000, width: 200, height: 60) }
    } teardown: {
        onMainActor { frontEndFixture?.tearDown(); frontEndFixture = nil }
    }

    // MARK: T3: the 10,000-view stress screen drawn whole

    Benchmark("frame of the 10,000-view stress screen, drawn whole (front end)", configuration: Benchmark.Configuration(
        metrics: [.wallClock, .processCPU, .mallocCountTotal], warmupIterations: 3,
        scalingFactor: .one, maxDuration: .seconds(20), maxIterations: 200
    ).tuned()) { benchmark in
        onMainActor(with: benchmark) { benchmark in
            guard let front = frontEndFixture else { fatalError("setup did not run") }
            measure(benchmark) {
                // Forgotten, so each frame is laid out, diffed against nothing and written whole.
                for _ in benchmark.scaledIterations {
                    front.app.invalidate()
                    front.app.draw()
                }
            }
        }
    } setup: {
        try onMainActor { frontEndFixture = try FrontEndFixture(rows: 10_000) }
    } teardown: {
        onMainActor { frontEndFixture?.tearDown(); frontEndFixture = nil }
    }
}
