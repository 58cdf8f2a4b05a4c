@_spi(Engine) import BerthRuntime
import BerthTestSupport
import CBerth
import Foundation
import Testing

/// Capabilities enforced at the host's side of the seam: the probe plugin's actions each
/// make one host call; a call outside the manifest's capabilities fails with
/// BERTH_ERR_DENIED and a `denied` event, in process and in a worker alike.
@MainActor
@Suite("Capabilities")
struct CapabilityTests {
    let workspace = PluginWorkspace()

    /// A host with persistence on (its state folder inside the workspace), probes loaded.
    private func host() throws -> BerthHost {
        let host = try workspace.makeHost(groups: [:], persistingState: true)
        #expect(host.loadAll().isEmpty)
        return host
    }

    /// Sends `action` to `screen`; the failure's message, or nil when it succeeded.
    private func failure(_ host: BerthHost, _ screen: Router, _ action: String, payload: String = "") -> String? {
        do {
            try host.sendBlocking(screen: screen.id, action: action, payload: Array(payload.utf8))
            return nil
        } catch {
            return error.message
        }
    }

    private func lastStatus(_ host: BerthHost) throws -> FFIValue {
        try #require(host.generation(of: "org.berth.probe")).call("probe_last_status", arguments: [])
    }

    @Test("a plugin with \"capabilities\": [] cannot navigate, persist or start a task, and each refusal names the capability")
    func emptyCapabilities() throws {
        workspace.stageProbe { $0["capabilities"] = [String]() }
        let host = try host()
        let screen = try host.push("probe")
        for (action, capability) in [("push-own", "navigate"), ("persist", "state.persist"), ("task", "tasks"), ("context", "context")] {
            let message = try #require(failure(host, screen, action), "\(action) was not refused")
            #expect(message.contains("lacks the capability '\(capability)'"), "\(message)")
            #expect(try lastStatus(host) == .int32(Int32(BERTH_ERR_DENIED)))
            let event = try #require(host.events.last { $0.kind == .denied })
            #expect(event.subject == .plugin("org.berth.probe"))
            #expect(event.message.contains("no capability '\(capability)'"), "\(event.message)")
        }
        #expect(host.openRouters.count == 1, "nothing was pushed")
    }

    @Test("a Swift plugin gets the refusal as a BerthError naming the capability as Swift spells it: Counter cannot start its ticking task without .tasks")
    func swiftPluginSeesDenied() throws {
        workspace.stage("counter.json") { $0["capabilities"] = ["state.persist"] }
        let host = try host()
        #expect { try host.push("counter") } throws: { error in
            guard let error = error as? ScreenError else { return false }
            // The plugin's activate returned the status of the refusal it could not get past.
            return error.code == .pluginFailed && error.pluginStatus == .denied
                && error.message.contains("activate failed: task_start: com.example.counter lacks the capability .tasks (add it to Plugin(capabilities:)")
        }
        #expect(host.events.last { $0.kind == .denied }?.description == "com.example.counter: task_start refused: no capability .tasks")
    }

    @Test("a manifest without capabilities keeps every host service: navigate, persist and tasks work")
    func undeclaredKeepsHostServices() throws {
        workspace.stageProbe()
        let host = try host()
        // The probe is a C image: its task must be awaited (by closing its screen) before
        // the image is unmapped.
        defer { host.shutdown() }
        let screen = try host.push("probe")
        for action in ["push-own", "persist", "task"] {
            #expect(failure(host, screen, action) == nil, "\(action)")
            #expect(try lastStatus(host) == .int32(Int32(BERTH_OK)))
        }
        #expect(host.openRouters.map(\.route).contains("other"))
        #expect(host.events.allSatisfy { $0.kind != .denied })
    }

    @Test("with navigate but not navigate.any a plugin pushes its own routes but not another plugin's")
    func navigateOwnOnly() throws {
        workspace.stageProbe { $0["capabilities"] = ["navigate"] }
        workspace.stageProbe(other: true) { $0["routes"] = ["probe"] }
        let host = try host()
        let screen = try host.push("org.berth.probe/probe")
        #expect(failure(host, screen, "push-own") == nil)
        let own = try #require(host.openRouters.max { $0.id < $1.id })
        #expect(own.route == "other" && own.pluginID == "org.berth.probe", "\(host.events.suffix(8).map(\.description))")
        #expect(failure(host, own, "push", payload: "org.berth.probe/probe") == nil, "its own route, named with its id")
        let top = try #require(host.openRouters.max { $0.id < $1.id })
        #expect(top.id > own.id && top.route == "probe")
        let message = try #require(failure(host, top, "push", payload: "org.berth.probe-other/probe"))
        #expect(message.contains("lacks the capability 'navigate.any'"), "\(message)")
        #expect(host.openRouters.allSatisfy { $0.pluginID == "org.berth.probe" })
        #expect(host.events.last { $0.kind == .denied }?.message.contains("navigate.any") == true)
    }
}
