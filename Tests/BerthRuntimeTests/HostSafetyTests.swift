import Foundation
import Testing
@_spi(Engine) @testable import BerthRuntime
import BerthTestSupport

/// Misbehaving plugins and odd sequences the host must survive (found in review).
@Suite("Host safety") @MainActor
struct HostSafetyTests {
    private func fixtureHost() throws -> (PluginWorkspace, BerthHost, PluginGeneration) {
        let workspace = PluginWorkspace()
        workspace.stageFixture(folder: "fixture") {
            $0["routes"] = ["probe", "fails", "task-then-fail", "off-thread"]
            $0["exports"] = ["fx_offthread_status", "fx_task_releases", "fx_task_runs_finished", "fx_deactivations"].map {
                ["symbol": $0, "params": [String](), "returns": "int32"]
            }
        }
        let host = try workspace.makeHost()
        let generation = try host.load("org.berth.fixtures")
        return (workspace, host, generation)
    }

    @Test("an activate that fails part-way is followed by deactivate; its task is cancelled, awaited and released")
    func failedActivationCancelsTasks() throws {
        let (_, host, fixtures) = try fixtureHost()
        #expect { try host.push("org.berth.fixtures/task-then-fail") } throws: { error in
            (error as! ScreenError).message.contains("activate fails after starting a task")
        }
        #expect(try fixtures.call("fx_task_runs_finished", arguments: []) == .int32(1))
        #expect(try fixtures.call("fx_task_releases", arguments: []) == .int32(1))
        #expect(try fixtures.call("fx_deactivations", arguments: []) == .int32(1))
        #expect(host.openRouters.isEmpty)
        try host.unload("org.berth.fixtures")
    }

    @Test("a main-thread function called from a plugin's worker thread answers BERTH_ERR_STATE")
    func offThreadCallRefused() async throws {
        let (_, host, fixtures) = try fixtureHost()
        let screen = try host.push("org.berth.fixtures/off-thread")
        try await eventuallyAsync { try fixtures.call("fx_task_runs_finished", arguments: []) != .int32(0) }
        #expect(try fixtures.call("fx_offthread_status", arguments: []) == .int32(4))
        #expect(host.openRouters.map(\.id) == [screen.id], "nothing was pushed")
        host.close(screen)
    }

    @Test("a present the host refuses leaves no instance behind")
    func refusedPresentReleased() async throws {
        let plugins = try await ExamplePlugins()
        let host = plugins.host
        let inbox = try host.push("inbox")
        _ = try host.push("hello")
        // The inbox is not the top of its stack, so its present request is refused.
        try host.sendBlocking(screen: inbox.id, action: "compose", payload: [])
        #expect(host.openRouters.map(\.route) == ["inbox", "hello"])
        let created = host.events.filter { $0.kind == .created && $0.message.contains("compose") }.map(\.subject)
        let released = host.events.filter { $0.kind == .released }.map(\.subject)
        #expect(created.count == 1)
        #expect(created.allSatisfy(released.contains))
        #expect(host.events.contains { $0.kind == .failed && $0.message.contains("only the top presents") })
    }

    @Test("a reloaded screen keeps observing the children it opened")
    func reloadKeepsDelegateObservation() async throws {
        let plugins = try await ExamplePlugins()
        let host = plugins.host
        let inbox = try host.push("inbox")
        try host.sendBlocking(screen: inbox.id, action: "greet", payload: [])
        let hello = try #require(host.visibleRouter)
        try host.reload("com.example.inbox")
        try host.sendBlocking(screen: hello.id, action: "wave", payload: [])
        #expect(plugins.recorder.matching("[com.example.inbox#2] inbox heard the greeter: waved 1 time(s)").count == 1)
    }

    @Test("observing the same child twice delivers once")
    func observationDeduplicated() async throws {
        let plugins = try await ExamplePlugins()
        let host = plugins.host
        let inbox = try host.push("inbox")
        try host.sendBlocking(screen: inbox.id, action: "greet", payload: [])
        let hello = try #require(host.visibleRouter)
        #expect(hello.delegateObservers.count == 1)
        // The inbox asked once on "greet"; asking again must not add a second delivery.
        try host.navigator.observeDelegate(of: hello.id, by: inbox)
        #expect(hello.delegateObservers.count == 1)
        try host.sendBlocking(screen: hello.id, action: "wave", payload: [])
        #expect(plugins.recorder.matching("inbox heard the greeter: waved 1 time(s)").count == 1)
        host.observeDelegate(of: hello) { _, _ in }
        #expect(hello.delegateObservers.count == 2, "a host observer is separate from the screen's")
        // Only a child may be observed: the greeter cannot observe the inbox above it.
        #expect(throws: ScreenError.self) { try host.navigator.observeDelegate(of: inbox.id, by: hello) }
    }
}

@Suite("Host safety, continued") @MainActor
struct HostSafetyMoreTests {
    @Test("a plugin's Swift Task calling a main-thread function is refused with a message; the host goes on")
    func taskCannotNavigate() async throws {
        let plugins = try await ExamplePlugins()
        let inbox = try plugins.host.push("inbox")
        try plugins.host.sendBlocking(screen: inbox.id, action: "push-from-task", payload: [])
        await eventuallyAsync { !plugins.recorder.matching("push from a task").isEmpty }
        // CI once waited 119 s here for a line that never came: say what the host saw
        // (a worker's crash is an event) and what the plugin logged.
        #expect(plugins.recorder.matching("push from a task was refused: this host function may only be called on the main thread").count == 1,
                "events: \(plugins.host.events.suffix(15).map { "\($0.kind) \($0)" }); logged: \(plugins.recorder.all.suffix(10))")
        #expect(plugins.host.openRouters.map(\.route) == ["inbox"])
    }

    @Test("a reload rolled back after the new generation registered services keeps the old generation's")
    func rollbackKeepsServices() async throws {
        let plugins = try await ExamplePlugins.withRouteContext()
        let host = plugins.host
        let profile = try host.push("profile")
        host.beginSession("s")
        try host.sendBlocking(screen: profile.id, action: "session", payload: [])
        // The new generation's entry runs (and registers its services), then the handshake
        // fails: the manifest says another ABI minor than the library reports.
        let folder = plugins.workspace.plugins + "/com.example.profile"
        var manifest = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: folder + "/plugin.json"))) as! [String: Any]
        manifest["abi"] = "1.7"
        plugins.workspace.write(manifest: manifest, in: folder)
        #expect(throws: LoaderError.self) { try host.reload("com.example.profile") }
        let reopened = try #require(host.router(profile.id))
        try host.sendBlocking(screen: reopened.id, action: "session", payload: [])
        #expect(plugins.recorder.matching("profile is in user session #").count == 2)
        #expect(host.scopes.registrations.contains { $0.key.hasSuffix("Profile.UserSession") && $0.provider == "com.example.profile#1" })
    }

    @Test("a render that fails keeps the screen's state; repeated if ids do not trap")
    func failedRenderKeepsState() throws {
        let workspace = PluginWorkspace()
        workspace.stageFixture(folder: "fixture") { $0["routes"] = ["probe", "bad-render"] }
        let host = try workspace.makeHost()
        try host.load("org.berth.fixtures")
        let bad = try host.push("org.berth.fixtures/bad-render")
        let storage = try #require(bad.module?.stateStorage)
        storage.write(identity: "Probe", index: 0, fingerprint: 1, bytes: [7])
        #expect(throws: ScreenError.self) { try host.render() }
        #expect(storage.slots.count == 1)
        let duplicate = ViewNode(type: "VStack", id: "S", fields: [:], children: [
            ViewNode(type: "if", id: "S.x/if", fields: ["branch": "true"], children: []),
            ViewNode(type: "if", id: "S.x/if", fields: ["branch": "false"], children: []),
        ])
        #expect(ViewTree(root: duplicate).branches == ["S.x/if": true], "the first of two ifs with one identity wins")
    }

    @Test("a screen opened under a modal renders at once, so its .routerContext observer is live")
    func hiddenScreenRegistersViewObservers() async throws {
        let plugins = try await ExamplePlugins.withRouteContext()
        let host = plugins.host
        _ = try host.push("counter")
        _ = try host.present("counter")
        let card = try host.navigator.screens.makeScreen("profile-card", argument: [])
        try host.navigator.attachActivateAndPush(card, in: host.navigator.launchStack)
        #expect(host.visibleRouter !== card)
        #expect(host.contextObserverLines.contains { $0.hasPrefix("screen \(card.id) com.example.profile/profile-card") })
    }

    @Test("retired Swift images past the limit are reported once, as data the CLI turns into advice; the host goes on")
    func retiredLimitWarnsOnce() async throws {
        let plugins = try await ExamplePlugins(isolation: .inProcessOnly)
        let host = plugins.host
        host.retiredLimitBytes = 1
        let over = { host.events.filter { $0.kind == .retiredLimitExceeded && $0.message.contains("over the") } }
        try host.reload("com.example.counter")
        #expect(host.retiredGenerations == 1)
        #expect(over().count == 1)
        #expect(over().first?.message.contains("berth") == false, "the runtime names no CLI command")
        try host.reload("com.example.counter")
        #expect(host.retiredGenerations == 2)
        #expect(over().count == 1, "the warning is given when the limit is crossed, not on every reload")
        let counter = try host.push("counter")
        #expect(counter.module?.isActive == true)
    }
}

extension BerthHost {
    /// The observers as one line each (what `observers` prints), for compact expectations.
    var contextObserverLines: [String] {
        contextObservations.map { "screen \($0.screen) \($0.pluginID)/\($0.route): \($0.type)\($0.byHost ? " (host)" : "")" }
    }
}

/// A plugin that opens itself from activate, forever, meets the screen limits.
@Suite("Screen limits") @MainActor
struct ScreenLimitTests {
    @Test("a screen that pushes itself on activate stops at the stack depth limit with an error; the host goes on")
    func stackDepth() throws {
        let workspace = PluginWorkspace()
        workspace.stage("greeter.json")
        workspace.stageCrasher()
        var configuration = BerthHost.Configuration(pluginFolders: [workspace.plugins], runtimeBase: workspace.runtimeBase,
                                                    isolation: TestIsolation.settings)
        configuration.screenLimits = .init(openScreens: 1_000, stackDepth: 10)
        let host = try BerthHost(configuration: configuration)
        host.discover()
        #expect(host.loadAll().isEmpty)
        _ = try host.push("loop-activate")
        #expect(host.openRouters.count == 10)
        let refusals = host.events.filter { $0.kind == .failed && $0.message.contains("its stack is 10 screens deep, the limit is 10") }
        #expect(refusals.count == 1, "\(host.events.suffix(3))")
        let modal = try host.present("hello")
        #expect(modal.module?.isActive == true, "the host still opens screens")
    }

    @Test("the open-screen limit stops a runaway plugin too")
    func openScreens() throws {
        let workspace = PluginWorkspace()
        workspace.stageCrasher()
        var configuration = BerthHost.Configuration(pluginFolders: [workspace.plugins], runtimeBase: workspace.runtimeBase,
                                                    isolation: TestIsolation.settings)
        configuration.screenLimits = .init(openScreens: 5, stackDepth: 64)
        let host = try BerthHost(configuration: configuration)
        host.discover()
        #expect(host.loadAll().isEmpty)
        _ = try host.push("loop-activate")
        #expect(host.openRouters.count == 5)
        #expect(host.events.contains { $0.kind == .failed && $0.message.contains("5 screens are open, the limit is 5") })
        #expect { try host.push("ok") } throws: { error in
            guard let error = error as? ScreenError else { return false }
            return error.code == .screenLimit && error.screen == nil && error.message.contains("the limit is 5")
        }
    }
}
