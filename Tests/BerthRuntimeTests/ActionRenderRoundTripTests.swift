import Foundation
import Testing
@_spi(Engine) @testable import BerthRuntime
import BerthTestSupport

/// An action sent to an isolated plugin's visible screen and the render the host makes
/// after it go in one round trip (`actionThenRender`), through the C fixture's render_tree
/// table, which counts its render passes (Tests/Fixtures/BerthFixtures/fixtures.c). The
/// failures read exactly as they do in the host's process.
@Suite("Action and render in one round trip (isolated plugins)") @MainActor
struct ActionRenderRoundTripTests {
    @MainActor
    struct Setup {
        let workspace = PluginWorkspace()
        let host: BerthHost
        let generation: PluginGeneration
        let screen: Router

        init(_ mode: IsolationMode) throws {
            workspace.stageFixture(folder: "fixture", entry: "fixture_entry_render_tree") {
                $0["exports"] = [["symbol": "fx_tree_renders", "params": [], "returns": "int32"]]
            }
            host = try workspace.makeHost(isolation: TestIsolation.settings(.always(mode)))
            generation = try host.load("org.berth.fixtures")
            screen = try host.push("org.berth.fixtures/probe")
        }

        var renders: Int32 {
            get throws {
                guard case .int32(let count) = try generation.call("fx_tree_renders", arguments: []) else { return -1 }
                return count
            }
        }

        var connection: any PluginConnection { generation.connection }

        var isolated: IsolatedPlugin {
            get throws { try #require(generation.connection as? IsolatedPlugin) }
        }

        var failures: [String] { host.events.filter { $0.kind == .failed }.map(\.message) }

        /// Sends `action` through the plugin's lane; its error's message, if it failed.
        func sendOnLane(_ action: String, payload: String = "") async -> String? {
            do {
                try await host.send(screen: screen.id, action: action, payload: Array(payload.utf8))
                return nil
            } catch {
                return error.message
            }
        }

        /// Sends `action`; its error's message, if it failed.
        func send(_ action: String) -> String? {
            do {
                try host.sendBlocking(screen: screen.id, action: action, payload: [])
                return nil
            } catch {
                return error.message
            }
        }
    }

    @Test("an action to the visible screen and the render after it cost one round trip; the plugin renders once per action")
    func oneRoundTrip() throws {
        let setup = try Setup(.process)
        let isolated = try setup.isolated
        let renders = try setup.renders
        let calls = isolated.callsMade
        for _ in 0..<3 { #expect(setup.send("bump") == nil) }
        #expect(isolated.callsMade - calls == 3)
        #expect(isolated.rendersTakenFromActions == 3)
        #expect(try setup.renders - renders == 3)
        #expect(setup.failures.isEmpty, "\(setup.failures)")
    }

    @Test("an action that calls back into the host is rendered by a render of its own, once")
    func callBackRendersSeparately() throws {
        let setup = try Setup(.process)
        let isolated = try setup.isolated
        let renders = try setup.renders
        let calls = isolated.callsMade
        #expect(setup.send("write") == nil)
        #expect(isolated.callsMade - calls == 2)
        #expect(isolated.rendersTakenFromActions == 0)
        #expect(try setup.renders - renders == 1)
        #expect(setup.screen.module?.stateStorage.slots.isEmpty == true, "the render's GC dropped the slot no view read")
    }

    @Test("a failing action is not rendered with it and reports as in the host's process; the screen is refreshed once")
    func failingAction() throws {
        let inProcess = try Setup(.inProcess)
        let setup = try Setup(.process)
        let isolated = try setup.isolated
        let renders = try setup.renders
        let calls = isolated.callsMade
        let message = setup.send("fail")
        #expect(message == "org.berth.fixtures/probe action 'fail' failed: fixture: action 'fail' fails")
        #expect(message == inProcess.send("fail"))
        #expect(isolated.callsMade - calls == 2, "the action, then the host's refresh")
        #expect(isolated.rendersTakenFromActions == 0)
        #expect(try setup.renders - renders == 1)
        #expect(setup.failures == inProcess.failures)
    }

    @Test("a render that fails after a successful action reports as a separate render failure does, and is not retried")
    func failingRenderAfterAction() throws {
        let inProcess = try Setup(.inProcess)
        let setup = try Setup(.process)
        let isolated = try setup.isolated
        let renders = try setup.renders
        let calls = isolated.callsMade
        #expect(setup.send("break-render") == nil)
        #expect(inProcess.send("break-render") == nil)
        #expect(isolated.callsMade - calls == 1)
        #expect(try setup.renders - renders == 1)
        let expected = "org.berth.fixtures/probe render failed: fixture: render refused after 'break-render'"
        #expect(setup.failures == [expected])
        #expect(setup.failures == inProcess.failures)
        // A render of its own fails with the same message, and the end of that operation
        // does not render again: it would only fail again.
        #expect { try setup.host.render() } throws: { ($0 as? ScreenError)?.message == expected }
        #expect { try inProcess.host.render() } throws: { ($0 as? ScreenError)?.message == expected }
        #expect(try setup.renders - renders == 2)
        #expect(setup.failures == [expected])
        #expect(setup.failures == inProcess.failures)
    }

    @Test("a render made with an action is not used once the screen's state changed: the host renders again and keeps the identities")
    func staleRenderIsNotUsed() throws {
        let setup = try Setup(.process)
        let isolated = try setup.isolated
        let module = try #require(setup.screen.module)
        let instance = try #require(module.instance)
        let renders = try setup.renders
        let calls = isolated.callsMade
        try isolated.action(instance, name: "bump", payload: [], renderingAfterwards: module.stateStorage)
        module.stateStorage.write(identity: "Host", index: 0, fingerprint: 1, bytes: [1])
        try module.render()
        #expect(isolated.callsMade - calls == 2, "the action with its render, then a render of its own")
        #expect(isolated.rendersTakenFromActions == 0)
        #expect(try setup.renders - renders == 2)
    }

    @Test("on the lane, an action and the render after it are one lane job: the plugin renders once per action",
          arguments: [IsolationMode.inProcess, .process])
    func oneLaneJob(_ mode: IsolationMode) async throws {
        let setup = try Setup(mode)
        let renders = try setup.renders
        let (taken, calls) = (setup.connection.rendersTakenFromActions, setup.connection.laneCallsRun)
        let sentAhead = mode == .process ? try setup.isolated.group.callsSentAhead : 0
        for _ in 0..<3 { #expect(await setup.sendOnLane("bump") == nil) }
        #expect(setup.connection.rendersTakenFromActions - taken == 3)
        // A worker's tree is checked on the lane as its reply arrives: no second trip to check it.
        #expect(setup.connection.laneCallsRun - calls == 3)
        if mode == .process {
            // Each request went out from the main actor while the lane woke to wait for its reply.
            #expect(try setup.isolated.group.callsSentAhead - sentAhead == 3)
        }
        #expect(try setup.renders - renders == 3)
        #expect(setup.failures.isEmpty, "\(setup.failures)")
    }

    @Test("on the lane, an action that calls back into the host is rendered by a render of its own, once; a failing one is not rendered with it",
          arguments: [IsolationMode.inProcess, .process])
    func laneCallBackAndFailure(_ mode: IsolationMode) async throws {
        let setup = try Setup(mode)
        let renders = try setup.renders
        #expect(await setup.sendOnLane("write") == nil)
        #expect(setup.connection.rendersTakenFromActions == 0)
        #expect(try setup.renders - renders == 1)
        #expect(setup.screen.module?.stateStorage.slots.isEmpty == true, "the render's GC dropped the slot no view read")
        #expect(await setup.sendOnLane("fail") == "org.berth.fixtures/probe action 'fail' failed: fixture: action 'fail' fails")
        #expect(setup.connection.rendersTakenFromActions == 0)
    }

    @Test("on the lane, a render that fails after a successful action is reported once, as a render failure",
          arguments: [IsolationMode.inProcess, .process])
    func laneFailingRender(_ mode: IsolationMode) async throws {
        let setup = try Setup(mode)
        let renders = try setup.renders
        #expect(await setup.sendOnLane("break-render") == nil)
        #expect(setup.connection.rendersTakenFromActions == 1)
        #expect(try setup.renders - renders == 1)
        #expect(setup.failures == ["org.berth.fixtures/probe render failed: fixture: render refused after 'break-render'"])
    }

    @Test("on the lane, a render made with an action is not used when the host wrote the screen's state while the action ran",
          arguments: [IsolationMode.inProcess, .process])
    func laneStaleRender(_ mode: IsolationMode) async throws {
        let setup = try Setup(mode)
        let module = try #require(setup.screen.module)
        let renders = try setup.renders
        // The action waits in the plugin until the gate file exists: the write lands while
        // the action (and the render after it) belong to the lane, whatever the machine's
        // speed.
        let gate = setup.workspace.plugins + "/fixture/gate"
        let sending = Task { await setup.sendOnLane("wait-for", payload: gate) }
        for _ in 0..<6_000 where setup.connection.busyCall == nil { try await Task.sleep(for: .milliseconds(10)) }
        try #require(setup.connection.busyCall != nil, "the action reached the plugin's lane")
        module.stateStorage.write(identity: "Host", index: 0, fingerprint: 1, bytes: [1])
        #expect(FileManager.default.createFile(atPath: gate, contents: nil))
        #expect(await sending.value == nil)
        #expect(setup.connection.rendersTakenFromActions == 0, "the tree from before the write was not used")
        #expect(try setup.renders - renders == 2, "the render with the action, then the host's own")
        #expect(setup.failures.isEmpty, "\(setup.failures)")
    }
}
