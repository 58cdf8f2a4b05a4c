@_spi(Engine) import BerthRuntime
import BerthTestSupport
import Foundation
import Testing

/// Which services need which capability (Docs/scopes.md, "Capabilities"): a plugin's own
/// services need none; another plugin's need `services.consume` in the one resolving and
/// `services.provide` in the one providing. The same in process and in a worker (the
/// consumer joins the provider's worker group, so an instance can reach it there).
@MainActor
@Suite("Service capabilities, in both modes")
struct ServiceCapabilityTests {
    private let recorder = LogRecorder()

    /// A host with the scoped fixture (its own service of each kind) granted `consumer`,
    /// and, when `provider` is given, Greeter (its Greeting service) granted `provider`, both
    /// in Greeter's worker group.
    private func host(_ workspace: PluginWorkspace, consumer: [String], provider: [String]? = nil) throws -> BerthHost {
        workspace.stageFixture(folder: "scoped", entry: "fixture_entry_scoped", id: "org.berth.scoped") { manifest in
            manifest["routes"] = ["scoped"]
            manifest["capabilities"] = consumer
            manifest["isolation"] = ["group": "greeter-family"]
        }
        if let provider { workspace.stage("greeter.json") { $0["capabilities"] = provider } }
        // The host consents to the group (Docs/isolation.md, "Worker groups").
        let groups = ["greeter-family": Set(["com.example.greeter", "org.berth.scoped"])]
        let host = try workspace.makeHost(recorder: recorder, isolation: TestIsolation.settings, groups: groups)
        let errors = host.loadAll()
        guard errors.isEmpty else { throw errors[0] }
        return host
    }

    /// The message `key KEY` (a service_resolve) fails with, or nil when it resolved.
    private func resolveFailure(_ host: BerthHost, _ screen: Router, _ key: String) -> String? {
        do {
            try host.sendBlocking(screen: screen.id, action: "key", payload: Array(key.utf8))
            return nil
        } catch {
            return "\(error)"
        }
    }

    /// The last `denied` event: a resolve may run on any thread, so the host reports its
    /// denial in a main-actor job of its own, run once this test yields.
    private func lastDenial(_ host: BerthHost) async -> HostEvent? {
        for _ in 0..<1_000 {
            if let event = host.events.last(where: { $0.kind == .denied }) { return event }
            await Task.yield()
        }
        return nil
    }

    @Test("with \"capabilities\": [] a plugin registers its services and resolves them from its screens")
    func ownServicesNeedNoCapability() throws {
        let workspace = PluginWorkspace()
        let host = try host(workspace, consumer: [])
        let screen = try host.push("scoped")
        try host.sendBlocking(screen: screen.id, action: "resolve", payload: Array("singleton".utf8))
        #expect(resolveFailure(host, screen, "org.berth.scoped/screen") == nil)
        #expect(recorder.matching("resolved singleton #").count == 1, "\(recorder.all)")
        #expect(host.events.allSatisfy { $0.kind != .denied }, "\(host.events.map(\.description))")
    }

    @Test("another plugin's service needs services.consume in the consumer: refused in one line, a denied event on the consumer")
    func otherServiceNeedsConsume() async throws {
        let workspace = PluginWorkspace()
        let host = try host(workspace, consumer: [], provider: ["services.provide"])
        let screen = try host.push("scoped")
        let message = try #require(resolveFailure(host, screen, "com.example.greeter/Greeting"))
        #expect(message.contains("service_resolve com.example.greeter/Greeting: org.berth.scoped lacks the capability 'services.consume'"), "\(message)")
        #expect(!message.contains("\n"))
        let event = try #require(await lastDenial(host))
        #expect(event.subject == .plugin("org.berth.scoped"))
        #expect(event.message == "service_resolve com.example.greeter/Greeting refused: no capability 'services.consume'")
    }

    @Test("another plugin's service needs services.provide in the provider: the refusal and the denied event name the provider")
    func otherServiceNeedsProvide() async throws {
        let workspace = PluginWorkspace()
        let host = try host(workspace, consumer: ["services.consume"], provider: [])
        let screen = try host.push("scoped")
        let message = try #require(resolveFailure(host, screen, "com.example.greeter/Greeting"))
        #expect(message.contains("from org.berth.scoped: com.example.greeter lacks the capability 'services.provide'"), "\(message)")
        let event = try #require(await lastDenial(host))
        #expect(event.subject == .plugin("com.example.greeter"))
    }

    @Test("with services.consume and services.provide another plugin's service resolves")
    func bothGranted() throws {
        let workspace = PluginWorkspace()
        let host = try host(workspace, consumer: ["services.consume"], provider: ["services.provide"])
        let screen = try host.push("scoped")
        #expect(resolveFailure(host, screen, "com.example.greeter/Greeting") == nil)
        #expect(host.events.allSatisfy { $0.kind != .denied }, "\(host.events.map(\.description))")
    }
}
