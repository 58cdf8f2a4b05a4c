import Benchmark
@_spi(Engine) import BerthRuntime
import BerthTerminalUI
import Foundation

// Renders off the main actor (issue 39). R4 is a key press on screen B (Counter, in a worker)
// until its frame is written, while plugin A (the attacker fixture, in another worker)
// renders a 150,000-view JSON tree one render after another, against the same key press
// with A idle. A's render runs on its lane, and so do the tree's decode and limit checks:
// the main actor only commits the checked tree.

extension ExamplePlugin {
    /// The hostile fixture: its action "big-render N" makes each later render a JSON tree of
    /// N text views.
    static let attacker = cFixture(id: "org.berth.attacker", name: "Attacker", library: "libBerthAttacker.so",
                                   entry: "berth_attacker_entry_v1", routes: ["attack"])
}

/// Counter over the attacker's screen, both in workers: the visible screen is Counter (B);
/// the attacker's under it is A.
@MainActor
final class RenderLaneFixture: KeyPressFixture {
    static let views = 150_000
    let fixture: ScreenFixture
    let app: TerminalApp
    private let bigScreen: Int
    private var keepRendering: Task<Void, Never>?

    init() throws {
        fixture = try ScreenFixture([.attacker, .counter], isolation: .process)
        bigScreen = try fixture.host.push("org.berth.attacker/attack").id
        _ = try fixture.host.push("com.example.counter/counter")
        app = TerminalApp(host: fixture.host, screen: CountingScreen(width: 80, height: 24))
        app.draw()
    }

    /// Makes A's renders 150,000 views, then keeps A rendering, each render asked for as soon
    /// as the last was committed.
    func keepPluginARendering() {
        let (host, screen) = (fixture.host, bigScreen)
        keepRendering = Task { @MainActor in
            _ = try? await host.send(screen: screen, action: "big-render", payload: Array(String(Self.views).utf8))
            while !Task.isCancelled {
                // The root's children, not `nodeCount`: a walk of the tree would be main-actor work.
                guard (try? await host.renderOnLane(screen: screen))??.root?.children.count == Self.views else { fatalError("A's render failed") }
            }
        }
    }

    /// Waits until A is inside a render (so the measured key press overlaps it).
    func waitUntilPluginAIsBusy() async {
        while fixture.host.screen(bigScreen)?.busyCall?.function != "render" { try? await Task.sleep(for: .milliseconds(1)) }
    }

    func tearDown() async {
        keepRendering?.cancel()
        await keepRendering?.value
        app.detach()
        fixture.tearDown()
    }
}

func registerRenderLaneBenchmarks() {
    registerKeyPressBenchmarks(busy: "key press on screen B while plugin A renders a 150,000-view JSON tree (lanes)",
                               idle: "the same key press with plugin A idle (150,000-view JSON tree)") { rendering in
        let lanes = try RenderLaneFixture()
        if rendering { lanes.keepPluginARendering() }
        return lanes
    }
}
