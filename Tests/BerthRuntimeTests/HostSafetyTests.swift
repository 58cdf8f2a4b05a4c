import Foundation
import Testing
@testable import BerthRuntime
import BerthTestSupport

/// Misbehaving plugins and odd sequences the host must survive (found in review).
@Suite("Host safety") @MainActor
struct HostSafetyTests {
    private func fixtureHost() throws -> (PluginWorkspace, BerthHost, PluginGeneration) {
        let workspace = PluginWorkspace()
        workspace.stageFixture(folder: "fixture") {
            $0["routes"] = ["probe", "fails", "task-then-fail", "off-thread"]
            $0["exports"] = ["fx_offthread_status", "fx_task_releases", "fx_task_runs_finished"].map {
                ["symbol": $0, "params": [String](), "returns": "int32"]
            }
        }
        let host = try workspace.makeHost()
        let generation = try host.load("org.berth.fixtures")
        return (workspace, host, generation)
    }

    @Test("a task started by an activate that then fails is cancelled, awaited and released")
    func failedActivationCancelsTasks() throws {
        let (_, host, fixtures) = try fixtureHost()
        #expect { try host.push("org.berth.fixtures/task-then-fail") } throws: { error in
            (error as! ScreenError).message.contains("activate fails after starting a task")
        }
        #expect(try fixtures.call("fx_task_runs_finished", arguments: []) == .int32(1))
        #expect(try fixtures.call("fx_task_releases", arguments: []) == .int32(1))
        #expect(host.openRouters.isEmpty)
        try host.unload("org.berth.fixtures")
    }

    @Test("a main-thread function called from a plugin's worker thread answers BERTH_ERR_STATE")
    func offThreadCallRefused() async throws {
        let (_, host, fixtures) = try fixtureHost()
        let screen = try host.push("org.berth.fixtures/off-thread")
        for _ in 0..<400 where try fixtures.call("fx_task_runs_finished", arguments: []) == .int32(0) {
            try await Task.sleep(for: .milliseconds(5))
        }
        #expect(try fixtures.call("fx_offthread_status", arguments: []) == .int32(4))
        #expect(host.openRouters.map(\.id) == [screen.id], "nothing was pushed")
        host.close(screen)
    }

    @Test("a present the host refuses leaves no instance behind")
    func refusedPresentReleased() throws {
        let plugins = try ExamplePlugins()
        let host = plugins.host
        let inbox = try host.push("inbox")
        _ = try host.push("hello")
        // The inbox is not the top of its stack, so its present request is refused.
        try host.send(screen: inbox.id, action: "compose", payload: [])
        #expect(host.openRouters.map(\.route) == ["inbox", "hello"])
        let created = host.events.filter { $0.kind == .created && $0.message.contains("compose") }.map(\.subject)
        let released = host.events.filter { $0.kind == .released }.map(\.subject)
        #expect(created.count == 1)
        #expect(created.allSatisfy(released.contains))
        #expect(host.events.contains { $0.kind == .failed && $0.message.contains("only the top presents") })
    }

    @Test("a reloaded screen keeps observing the children it opened")
    func reloadKeepsDelegateObservation() throws {
        let plugins = try ExamplePlugins()
        let host = plugins.host
        let inbox = try host.push("inbox")
        try host.send(screen: inbox.id, action: "greet", payload: [])
        let hello = try #require(host.visibleRouter)
        try host.reload("com.example.inbox")
        try host.send(screen: hello.id, action: "wave", payload: [])
        #expect(plugins.recorder.matching("[com.example.inbox#2] inbox heard the greeter: waved 1 time(s)").count == 1)
    }

    @Test("observing the same child twice delivers once")
    func observationDeduplicated() throws {
        let plugins = try ExamplePlugins()
        let host = plugins.host
        let inbox = try host.push("inbox")
        try host.send(screen: inbox.id, action: "greet", payload: [])
        let hello = try #require(host.visibleRouter)
        #expect(hello.delegateObservers.count == 1)
        host.observeDelegate(of: hello) { _, _ in }
        #expect(hello.delegateObservers.count == 2, "a host observer is separate from the screen's")
    }
}
