import Testing
@testable import BerthRuntime
import BerthTestSupport

@Suite("Lifecycle state machines")
struct LifecycleStateMachineTests {
    @Test("a module instance goes created → active ⇄ inactive → released, idempotently")
    func moduleInstance() throws {
        var lifecycle = ModuleInstanceLifecycle(subject: "screen 1")
        #expect(lifecycle.name == "created")
        #expect(try lifecycle.activate() == .callActivate)
        #expect(try lifecycle.activate() == .none, "activate is idempotent")
        #expect(lifecycle.isActive)
        #expect(lifecycle.deactivate() == .callDeactivate)
        #expect(lifecycle.deactivate() == .none, "deactivate is idempotent")
        #expect(try lifecycle.activate() == .callActivate, "an inactive instance can be reactivated")
        #expect(lifecycle.deactivate() == .callDeactivate)
        #expect(try lifecycle.release() == .callDestroy)
        #expect(try lifecycle.release() == .none, "release happens once")
        #expect(lifecycle.isReleased)
    }

    @Test("releasing an active instance and activating a released one are typed errors")
    func illegalTransitions() throws {
        var active = ModuleInstanceLifecycle(subject: "screen 2")
        _ = try active.activate()
        #expect(throws: LifecycleError(subject: "screen 2", state: "active", event: "release (deactivate first)")) {
            try active.release()
        }
        var released = ModuleInstanceLifecycle(subject: "screen 3")
        _ = try released.release()
        #expect(throws: LifecycleError(subject: "screen 3", state: "released", event: "activate")) {
            try released.activate()
        }
    }

    @Test("a Swift generation is retired and a C generation unloaded, once")
    func generations() throws {
        var swift = GenerationLifecycle(runtime: .swift, subject: "generation s#1")
        #expect(try swift.end() == .retireImage)
        #expect(swift.name == "retired")
        #expect(throws: LifecycleError.self) { try swift.end() }
        var c = GenerationLifecycle(runtime: .c, subject: "generation c#1")
        #expect(try c.end() == .closeImage)
        #expect(c.name == "unloaded")
        #expect(throws: LifecycleError(subject: "generation c#1", state: "unloaded", event: "unload")) { try c.end() }
    }
}

@Suite("Screens of real plugins") @MainActor
struct ScreenTests {
    @Test("open creates and activates; close deactivates and releases; reopen is a fresh instance")
    func openCloseReopen() throws {
        let workspace = PluginWorkspace()
        workspace.stage("counter.json")
        workspace.stage("greeter.json")
        let host = try workspace.makeHost()
        _ = host.loadAll()
        let counter = try host.open("counter")
        #expect(counter.state == "active")
        try host.send(screen: counter.id, action: "increment", payload: [])
        try host.close(screen: counter.id)
        #expect(counter.state == "released")
        #expect { try host.send(screen: counter.id, action: "increment", payload: []) } throws: { error in
            (error as! ScreenError).code == .noSuchScreen
        }
        let reopened = try host.open("com.example.counter/counter")
        #expect(reopened.id != counter.id)
        #expect(host.events.map(\.kind).suffix(4) == [.deactivated, .released, .created, .activated])
    }

    @Test("a plugin's error reaches the host as the plugin's message")
    func pluginErrorMessage() throws {
        let workspace = PluginWorkspace()
        workspace.stage("greeter.json")
        workspace.stage("counter.json")
        let host = try workspace.makeHost()
        _ = host.loadAll()
        let hello = try host.open("hello")
        #expect { try host.send(screen: hello.id, action: "shout", payload: []) } throws: { error in
            (error as! ScreenError).message == "com.example.greeter/hello action 'shout' failed: hello has only the action 'wave'"
        }
        let counter = try host.open("counter")
        #expect { try host.send(screen: counter.id, action: "jump", payload: []) } throws: { error in
            (error as! ScreenError).message.hasSuffix("counter has no action 'jump' (increment, decrement, reset)")
        }
    }

    @Test("a create failure in the plugin leaves no screen behind")
    func createFailure() throws {
        let workspace = PluginWorkspace()
        workspace.stageFixture(folder: "fixture")
        let host = try workspace.makeHost()
        try host.load("org.berth.fixtures")
        #expect { try host.open("org.berth.fixtures/fails") } throws: { error in
            (error as! ScreenError).message.contains("fixture route 'fails' always fails to create")
        }
        #expect(host.openScreens.isEmpty)
    }

    @Test("unload closes the plugin's screens first; reload reopens them with fresh instances")
    func unloadAndReloadWithScreens() throws {
        let workspace = PluginWorkspace()
        workspace.stage("counter.json")
        let host = try workspace.makeHost()
        try host.load("com.example.counter")
        let first = try host.open("counter")
        try host.reload("com.example.counter")
        let reopened = try #require(host.openScreens.first)
        #expect(first.state == "released")
        #expect(reopened.id != first.id)
        #expect(reopened.generation.number == 2)
        try host.unload("com.example.counter")
        #expect(reopened.state == "released")
        #expect(host.openScreens.isEmpty)
    }
}
