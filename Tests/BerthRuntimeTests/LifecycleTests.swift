import Testing
@_spi(Engine) @testable import BerthRuntime
import BerthTestSupport

@Suite("Lifecycle state machines")
struct LifecycleStateMachineTests {
    private func subject(_ screen: Int) -> LifecycleError.Subject {
        LifecycleError.Subject(screen: screen, pluginID: "org.berth.test", route: "main")
    }

    @Test("a module instance goes created → active ⇄ inactive → released, idempotently")
    func moduleInstance() throws {
        var lifecycle = ModuleInstanceLifecycle(subject: subject(1))
        #expect(lifecycle.current == .created)
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
        var active = ModuleInstanceLifecycle(subject: subject(2))
        _ = try active.activate()
        #expect(throws: LifecycleError(subject: subject(2), state: .active, event: .release)) {
            try active.release()
        }
        var released = ModuleInstanceLifecycle(subject: subject(3))
        _ = try released.release()
        #expect(throws: LifecycleError(subject: subject(3), state: .released, event: .activate)) {
            try released.activate()
        }
        let refusal = LifecycleError(subject: subject(2), state: .active, event: .release)
        #expect(refusal.description == "screen 2 (org.berth.test/main): cannot release (deactivate first) while active")
    }

    @Test("a Swift generation is retired and a C generation unloaded, once")
    @MainActor
    func generations() throws {
        let workspace = PluginWorkspace()
        workspace.stage("counter.json")
        workspace.stage("greeter.json")
        let host = try workspace.makeHost(isolation: .inProcessOnly)
        let swift = try host.load("com.example.counter")
        let c = try host.load("com.example.greeter")
        #expect(swift.state == .loaded && c.state == .loaded)
        try host.unload("com.example.counter")
        try host.unload("com.example.greeter")
        #expect(swift.state == .retired)
        #expect(c.state == .unloaded)
        #expect(throws: LoaderError.self) { try swift.end() }
        #expect(throws: LoaderError.self) { try c.end() }
    }
}

