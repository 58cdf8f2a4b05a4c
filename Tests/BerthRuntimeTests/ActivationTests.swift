import Foundation
import Testing
@_spi(Engine) @testable import BerthRuntime
import BerthTestSupport

/// `activateDiscovered`: every valid plugin ready at start, lazy ones on their first use.
@MainActor
@Suite("Activation: plugins load at start, or on first use")
struct ActivationTests {
    @Test("activateDiscovered loads every eager plugin and defers a lazy one until a route of it opens")
    func lazyOnOpen() throws {
        let workspace = PluginWorkspace()
        workspace.stage("counter.json") { $0["activation"] = "lazy" }
        workspace.stage("greeter.json")
        let host = try workspace.makeHost()
        defer { host.shutdown() }
        #expect(host.activateDiscovered().isEmpty)
        #expect(host.generation(of: "com.example.greeter") != nil)
        #expect(host.generation(of: "com.example.counter") == nil)
        #expect(host.plugins["com.example.counter"]?.stateName == "discovered (lazy)")

        let screen = try host.push("counter")
        #expect(screen.module?.generation.number == 1)
        #expect(host.plugins["com.example.counter"]?.stateName == "loaded")
    }

    @Test("with lazy set, a plugin's export call loads it; an eager manifest still loads at start")
    func lazyOnCall() throws {
        let workspace = PluginWorkspace()
        workspace.stage("counter.json") { $0["activation"] = "eager" }
        workspace.stage("greeter.json")
        let host = try workspace.makeHost()
        defer { host.shutdown() }
        #expect(host.activateDiscovered(lazy: true).isEmpty)
        #expect(host.generation(of: "com.example.counter") != nil)
        #expect(host.generation(of: "com.example.greeter") == nil)
        let generation = try #require(try host.generationForUse(of: "com.example.greeter"))
        #expect(try generation.call("greeter_add", textArguments: ["2", "40"]).description == "42")
    }

    @Test("a route whose plugin is not loaded, or is invalid, says which and why")
    func unavailableRoutes() throws {
        let workspace = PluginWorkspace()
        workspace.stage("counter.json")
        workspace.stage("greeter.json") { $0["entry"] = "nobody_v1" }
        let host = try workspace.makeHost()
        defer { host.shutdown() }
        let notLoaded = #expect(throws: ScreenError.self) { try host.push("counter") }
        #expect(notLoaded?.message == "route 'counter' is provided by com.example.counter, which is not loaded (load com.example.counter)")
        let invalid = #expect(throws: ScreenError.self) { try host.push("hello") }
        #expect(invalid?.message.hasPrefix("route 'hello' is provided by com.example.greeter, which is invalid: ") == true, "\(String(describing: invalid))")
        #expect(invalid?.message.contains("nobody_v1") == true)
    }
}
