import Foundation
import Testing
@_spi(Engine) @testable import BerthRuntime
import BerthTestSupport

@Suite("7. Unload and reload with screens open") @MainActor
struct UnloadReloadWithScreensTests {
    /// counter(Counter) → inbox(Inbox) → hello(Greeter) → [modal] compose(Inbox) → counter(Counter)
    private func openTree(_ host: BerthHost) throws -> [Router] {
        [try host.push("counter"), try host.push("inbox"), try host.push("hello"),
         try host.present("compose"), try host.push("counter")]
    }

    @Test("unload closes the plugin's screens deepest first and everything above them")
    func unloadDeepestFirst() async throws {
        let plugins = try await ExamplePlugins()
        let host = plugins.host
        let screens = try openTree(host)
        try host.unload("com.example.inbox")
        // Inbox's compose (the modal root) closes first with the counter above it, then
        // Inbox's inbox screen with the hello screen above it.
        #expect(plugins.subjects(.deactivated) == [screens[4], screens[3], screens[2], screens[1]].map { HostEvent.Subject.screen($0.id) })
        #expect(plugins.subjects(.released) == [screens[4], screens[3], screens[2], screens[1]].map { HostEvent.Subject.screen($0.id) })
        #expect(host.openRouters.map(\.id) == [screens[0].id])
        #expect(host.generation(of: "com.example.inbox") == nil)
    }

    @Test("reload reopens the same routes in the same places with fresh instances, deepest first out")
    func reloadInPlace() async throws {
        let plugins = try await ExamplePlugins()
        let host = plugins.host
        let screens = try openTree(host)
        // Held strongly, so a freed instance's address cannot be reused by its replacement.
        let oldModules = screens.map(\.module)
        let visible = host.visibleRouter
        try host.reload("com.example.counter")
        #expect(plugins.host.events.filter { $0.kind == .released && $0.message.contains("reload") }.map(\.subject)
                == [.screen(screens[4].id), .screen(screens[0].id)])
        #expect(host.openRouters.map(\.id) == screens.map(\.id), "same routers, same places")
        #expect(host.visibleRouter === visible)
        for index in [0, 4] {
            #expect(screens[index].module !== oldModules[index])
            #expect(screens[index].module?.generation.number == 2)
            #expect(screens[index].interactor?.isActive == true)
        }
        for index in [1, 2, 3] {
            #expect(screens[index].module === oldModules[index], "other plugins' screens stay")
        }
        // The visible reopened screen appeared initially; the hidden one did not appear yet.
        #expect(screens[4].module?.deliveredEvents == [.didLoad, .willAppear(isPresentedInitially: true), .didAppear(isPresentedInitially: true)])
        #expect(screens[0].module?.deliveredEvents == [.didLoad])
    }

    @Test("a reload reports each phase's time on its event: validate, copy+hash, dlopen, handshake, close, reopen, restore")
    func reloadPhases() async throws {
        let plugins = try await ExamplePlugins()
        let host = plugins.host
        _ = try openTree(host)
        try host.reload("com.example.counter", keepState: true)
        let event = try #require(host.events.last { $0.kind == .reloaded })
        let timings = try #require(event.reloadTimings)
        #expect(host.lastReloadTimings == timings)
        #expect(timings.phases.map(\.name) == ["validate", "canary", "copy+hash", "dlopen", "handshake", "close old screens", "reopen", "restore"])
        // Every phase ran (two Counter screens were open; the canary only when it is on, in
        // process) and fits in the whole.
        for phase in timings.phases {
            if phase.name != "canary" { #expect(phase.duration > .zero, "\(phase.name) was measured") }
            #expect(phase.duration <= timings.total, "\(phase.name) is part of the total")
        }
        #expect(event.message.contains("2 screen(s) reopened (validate "))
    }

    @Test("a broken new generation rolls back: the screens are back in place on the old generation")
    func rollback() async throws {
        let plugins = try await ExamplePlugins()
        let host = plugins.host
        let screens = try openTree(host)
        // Swap in a library whose entry refuses the handshake (an id the manifest does not have).
        let folder = (plugins.workspace.plugins as NSString).appendingPathComponent("com.example.counter")
        let library = (folder as NSString).appendingPathComponent("libCounter.so")
        let original = try Data(contentsOf: URL(fileURLWithPath: library))
        try FileManager.default.removeItem(atPath: library)
        try FileManager.default.copyItem(atPath: BuildProducts.library("libInbox.so"), toPath: library)
        var manifest = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: folder + "/plugin.json"))) as! [String: Any]
        manifest["entry"] = "berth_inbox_entry_v1"
        manifest["exports"] = []
        plugins.workspace.write(manifest: manifest, in: folder)

        #expect { try host.reload("com.example.counter") } throws: { error in
            (error as! LoaderError).rollback == LoaderError.Rollback(step: .load, generation: 1) &&
                (error as! LoaderError).message.contains("reload failed at load") &&
                (error as! LoaderError).message.contains("rolled back to generation 1")
        }
        #expect(host.openRouters.map(\.id) == screens.map(\.id))
        for index in [0, 4] {
            #expect(screens[index].module?.generation.number == 1)
            #expect(screens[index].interactor?.isActive == true)
        }
        #expect(host.generation(of: "com.example.counter")?.number == 1)
        // The old generation still works.
        try host.sendBlocking(screen: screens[4].id, action: "increment", payload: [])
        _ = original
    }
}

@Suite("Delegate actions") @MainActor
struct DelegateActionTests {
    @Test("a child flow reports to its parent through its delegate channel, then closes itself")
    func composeReportsToInbox() async throws {
        let plugins = try await ExamplePlugins()
        let host = plugins.host
        let inbox = try host.push("inbox")
        try host.sendBlocking(screen: inbox.id, action: "compose", payload: [])
        let compose = try #require(host.visibleRouter)
        #expect(compose.route == "compose")
        try host.sendBlocking(screen: compose.id, action: "type", payload: Array("hello there".utf8))
        try host.sendBlocking(screen: compose.id, action: "send", payload: [])
        #expect(compose.isReleased, "compose dismissed itself")
        #expect(host.visibleRouter === inbox)
        #expect(plugins.recorder.matching("inbox received 'hello there' from screen \(compose.id)").count == 1)
    }

    @Test("a screen of one plugin observes the delegate actions of another plugin's screen (C)")
    func acrossPlugins() async throws {
        let plugins = try await ExamplePlugins()
        let host = plugins.host
        let inbox = try host.push("inbox")
        try host.sendBlocking(screen: inbox.id, action: "greet", payload: [])
        let hello = try #require(host.visibleRouter)
        #expect(hello.pluginID == "com.example.greeter")
        try host.sendBlocking(screen: hello.id, action: "wave", payload: [])
        #expect(plugins.recorder.matching("inbox heard the greeter: waved 1 time(s)").count == 1)
    }

    @Test("observers go away with either side: nothing is delivered after release")
    func observersGoAway() async throws {
        let plugins = try await ExamplePlugins()
        let host = plugins.host
        let inbox = try host.push("inbox")
        let hello = try host.push("hello")
        var heard: [String] = []
        host.observeDelegate(of: hello) { action, _ in heard.append(action) }
        try host.sendBlocking(screen: hello.id, action: "wave", payload: [])
        #expect(heard == ["waved"])
        host.close(hello)
        #expect(hello.delegateObservers.isEmpty)
        #expect(throws: ScreenError.self) { try host.sendBlocking(screen: hello.id, action: "wave", payload: []) }
        #expect(heard == ["waved"])
        _ = inbox
    }

    @Test("a delegate action with no observer goes nowhere and breaks nothing")
    func noObserver() async throws {
        let plugins = try await ExamplePlugins()
        let hello = try plugins.host.push("hello")
        try plugins.host.sendBlocking(screen: hello.id, action: "wave", payload: [])
        #expect(plugins.host.events.contains { $0.message == "delegate 'waved' → 0 observer(s)" })
    }
}
