import Foundation
import Testing
@_spi(Engine) @testable import BerthRuntime
import BerthTestSupport

/// Lanes (Docs/lanes.md): an action runs on its plugin's lane while the main actor goes on.
/// The crasher's "wait-for" action holds its lane until the test creates a file; Counter is
/// the other plugin. Both run where the test matrix says (in process, or in workers).
@Suite("Lanes: the host never waits on a plugin's action", .serialized) @MainActor
struct LaneTests {
    let workspace = PluginWorkspace()
    let recorder = LogRecorder()
    let host: BerthHost
    let gate: String

    init() throws {
        host = try workspace.makeCounterAndCrasherHost(recorder: recorder)
        gate = workspace.plugins + "/org.berth.crasher/gate"
    }

    /// Opens the gate: a waiting action returns (every test does at its end, whatever happened).
    private func openGate() {
        if !FileManager.default.fileExists(atPath: gate) { FileManager.default.createFile(atPath: gate, contents: nil) }
    }

    /// Starts the crasher's action on `screen` and returns once its lane is in it.
    private func startWaiting(on screen: Router) async throws -> Task<Void, any Error> {
        let (host, gate) = (host, gate)
        let action = Task { @MainActor in try await host.send(screen: screen.id, action: "wait-for", payload: Array(gate.utf8)) }
        for _ in 0..<6_000 where screen.module?.isBusy != true { try await Task.sleep(for: .milliseconds(10)) }
        try #require(screen.module?.isBusy == true, "the action reached the crasher's lane")
        return action
    }

    @Test("while one plugin's action runs, another plugin's screen takes actions and renders; the busy screen refuses input, naming the call")
    func otherScreensGoOn() async throws {
        let counter = try host.push("com.example.counter/counter")
        let busy = try host.push("org.berth.crasher/ok")
        let action = try await startWaiting(on: busy)
        defer { openGate() }

        try await host.send(screen: counter.id, action: "increment", payload: [])
        try await host.send(screen: counter.id, action: "report", payload: [])
        try #require(busy.module?.isBusy == true, "still in its action after Counter's: \(recorder.all)\n\(host.events.suffix(20).map(\.description))")
        #expect(recorder.all.contains { $0.contains("count 1, ticks") }, "\(recorder.all)")
        await #expect(throws: ScreenError.self) { try await host.send(screen: busy.id, action: "persist", payload: Array("1".utf8)) }
        do {
            try await host.send(screen: busy.id, action: "persist", payload: Array("1".utf8))
        } catch {
            #expect(error.code == .busy)
            #expect(error.message.contains("org.berth.crasher is busy: action 'wait-for' (screen \(busy.id))"), "\(error.message)")
        }
        #expect(busy.module?.busyCall?.function == "action 'wait-for'", "the action is still running")

        #expect(FileManager.default.createFile(atPath: gate, contents: nil))
        try await action.value
        #expect(busy.module?.isBusy == false)
        #expect(busy.module?.busyCall == nil)
        // The gate is open: this one returns at once, on a lane free for it.
        try await host.send(screen: busy.id, action: "wait-for", payload: Array(gate.utf8))
        #expect(recorder.matching("waited").count == 2, "the lane takes calls again: \(recorder.all)")
    }

    @Test("back on a busy screen removes it at once; its close sequence runs after the action returns, whose result is dropped")
    func backWhileBusy() async throws {
        let counter = try host.push("com.example.counter/counter")
        let busy = try host.push("org.berth.crasher/ok")
        let module = try #require(busy.module)
        let action = try await startWaiting(on: busy)
        defer { openGate() }

        try host.userBack()
        #expect(host.visibleRouter === counter, "the screen under it shows at once")
        #expect(!host.openRouters.contains { $0 === busy })
        #expect(module.isReleased, "released by the host now; the plugin hears of it after its action")
        #expect(module.isBusy, "the action is still running")

        #expect(FileManager.default.createFile(atPath: gate, contents: nil))
        try await action.value
        #expect(!module.isBusy)
        #expect(recorder.all.contains { $0.contains("waited") })
        // The lane is free, and the plugin takes new screens.
        let again = try host.push("org.berth.crasher/ok")
        try await host.send(screen: again.id, action: "wait-for", payload: Array(gate.utf8))
        #expect(recorder.matching("waited").count == 2, "\(recorder.all)")
    }

    @Test("unload and reload of a busy plugin are refused with a line naming the call; both work once it returns")
    func unloadWaitsForTheLane() async throws {
        let busy = try host.push("org.berth.crasher/ok")
        let action = try await startWaiting(on: busy)
        defer { openGate() }
        #expect(throws: LoaderError.self) { try host.unload("org.berth.crasher") }
        do {
            try host.reload("org.berth.crasher")
        } catch {
            #expect(error.description.contains("is busy: action 'wait-for'"), "\(error.description)")
        }
        #expect(FileManager.default.createFile(atPath: gate, contents: nil))
        try await action.value
        try host.reload("org.berth.crasher")
        try host.unload("org.berth.crasher")
    }
}
