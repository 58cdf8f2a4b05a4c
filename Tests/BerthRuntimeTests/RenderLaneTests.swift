import Foundation
import Testing
@_spi(Engine) @testable import BerthRuntime
import BerthTestSupport

/// Renders on lanes (Docs/lanes.md): a render runs on its plugin's lane, and its tree's
/// decode and limit checks run there too; the main actor only commits the checked tree.
/// The crasher's "gate-render" screen, once the test arms it, waits inside each render until
/// the test creates a file (before that, its renders go through: the host renders a visible
/// screen whenever an operation ends). Both run where the test matrix
/// says (in process, or in workers).
@Suite("Renders on lanes: the host never waits on a plugin's render", .serialized) @MainActor
struct RenderLaneTests {
    let workspace = PluginWorkspace()
    let recorder = LogRecorder()
    let host: BerthHost
    /// The gate screen's folder: its marker and release files.
    let gate: String

    init() throws {
        // With a state folder: a deferred deactivate's persist_write is checked to land.
        host = try workspace.makeCounterAndCrasherHost(recorder: recorder, persistingState: true)
        gate = workspace.plugins + "/org.berth.crasher"
    }

    /// Lets a render (or, with `when`, another call) waiting at the gate go (every test does
    /// at its end, whatever happened).
    func openGate(_ when: String = "render") {
        let leave = gate + "/leave-\(when)"
        if !FileManager.default.fileExists(atPath: leave) { FileManager.default.createFile(atPath: leave, contents: nil) }
    }

    /// Makes the gate screen's next renders wait at the gate.
    func armRenderGate() {
        #expect(FileManager.default.createFile(atPath: gate + "/arm-render", contents: nil))
    }

    /// Returns once the gate screen's plugin is inside its render (it said so, and its lane is in it).
    func waitUntilInsideRender(_ screen: Router) async throws {
        for _ in 0..<6_000 where recorder.matching("entered render").isEmpty || screen.module?.busyCall?.function != "render" {
            try await Task.sleep(for: .milliseconds(10))
        }
        try #require(!recorder.matching("entered render").isEmpty && screen.module?.busyCall?.function == "render",
                     "the render reached the crasher's lane: \(recorder.all)")
    }

    @Test("while one plugin renders on its lane, another plugin's screen takes actions; the busy screen refuses a second render; the tree is committed once it returns")
    func otherScreensGoOnWhileRendering() async throws {
        let gated = try host.push("org.berth.crasher/gate-render", argument: Array(gate.utf8))
        // No tick lands in the test: each would end an operation that renders the visible screen.
        let counter = try host.push("com.example.counter/counter", argument: Array("3600000".utf8))
        let passes = try #require(gated.module).renderPasses
        let (host, id) = (host, gated.id)
        armRenderGate()
        let render = Task { @MainActor in try await host.renderOnLane(screen: id) }
        defer { openGate() }
        try await waitUntilInsideRender(gated)

        try await host.send(screen: counter.id, action: "increment", payload: [])
        try await host.send(screen: counter.id, action: "report", payload: [])
        #expect(recorder.all.contains { $0.contains("count 1, ticks") }, "\(recorder.all)")
        do {
            try await host.renderOnLane(screen: gated.id)
            Issue.record("a second render of a busy screen was accepted")
        } catch {
            #expect(error.code == .busy)
            #expect(error.message.contains("org.berth.crasher is busy: render (screen \(gated.id))"), "\(error.message)")
        }
        #expect(recorder.matching("left render").isEmpty, "still inside its render after Counter's actions")
        #expect(gated.module?.busyCall?.function == "render")

        #expect(FileManager.default.createFile(atPath: gate + "/leave-render", contents: nil))
        let tree = try await render.value
        #expect(tree?.root?.fields["text"] == "still here")
        #expect(gated.module?.lastTree?.root?.fields["text"] == "still here")
        #expect(gated.module?.renderPasses == passes + 1)
        #expect(gated.module?.isBusy == false)
        #expect(recorder.matching("left render").count == 1)
    }

    @Test("the render after an action on the visible screen runs on the lane too: the host answers meanwhile")
    func renderAfterActionOnLane() async throws {
        // No tick lands in the test: each would end an operation that renders the visible screen.
        let counter = try host.push("com.example.counter/counter", argument: Array("3600000".utf8))
        let gated = try host.push("org.berth.crasher/gate-render", argument: Array(gate.utf8))
        #expect(host.visibleRouter === gated)
        let (host, id) = (host, gated.id)
        armRenderGate()
        let action = Task { @MainActor in try await host.send(screen: id, action: "tap", payload: []) }
        defer { openGate() }
        try await waitUntilInsideRender(gated)

        // The main actor is free: another screen's action, and the visible tree as it stood.
        try await host.send(screen: counter.id, action: "increment", payload: [])
        #expect(gated.module?.lastTree?.root?.fields["text"] == "still here")
        #expect(recorder.matching("left render").isEmpty, "still inside the render after the action")

        #expect(FileManager.default.createFile(atPath: gate + "/leave-render", contents: nil))
        try await action.value
        #expect(gated.module?.isBusy == false)
        #expect(recorder.matching("left render").count == 1, "one render after the action, not a second on the main actor: \(recorder.all)")
    }

    @Test("a tree over the view limit is refused by the check on the lane, in one line; the last tree stands")
    func overTheLimitOnTheLane() async throws {
        let folder = workspace.plugins + "/org.berth.attacker"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try? FileManager.default.copyItem(atPath: BuildProducts.library("libBerthAttacker.so"), toPath: folder + "/libBerthAttacker.so")
        workspace.write(manifest: [
            "id": "org.berth.attacker", "name": "Attacker", "version": "1.0.0", "abi": "1.0", "library": "libBerthAttacker.so",
            "entry": "berth_attacker_entry_v1", "runtime": "c", "routes": ["attack"],
        ], in: folder)
        _ = host.discover()
        try host.load("org.berth.attacker")
        let screen = try host.push("org.berth.attacker/attack")
        try await host.send(screen: screen.id, action: "big-render", payload: Array("1000".utf8))
        let thousand = try #require(try await host.renderOnLane(screen: screen.id))
        #expect(thousand.nodeCount == 1_001)

        try await host.send(screen: screen.id, action: "big-render", payload: Array("250000".utf8))
        do {
            try await host.renderOnLane(screen: screen.id)
            Issue.record("a 250,000-view tree was accepted")
        } catch {
            #expect(error.code == .pluginFailed)
            #expect(error.message.contains("org.berth.attacker/attack") && error.message.contains("over the limit of 200000"), "\(error.message)")
            #expect(!error.message.contains("\n"))
        }
        #expect(screen.module?.lastTree?.nodeCount == 1_001, "the last tree stands")
    }
}
