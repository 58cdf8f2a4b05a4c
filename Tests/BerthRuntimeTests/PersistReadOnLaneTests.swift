@_spi(Engine) import BerthRuntime
import BerthTestSupport
import Foundation
import Testing

/// A `persist_read` made during a call on the plugin's lane (`BerthHost.send`): in process,
/// one about the call's own screen, declared and granted, is answered on the lane itself;
/// every other one goes to the main actor, which answers and reports it as before. What the
/// plugin gets is the same in both modes and on both paths.
@MainActor
@Suite("persist_read during a lane call")
struct PersistReadOnLaneTests {
    let workspace = PluginWorkspace()

    /// A host with persistence on, the probe loaded.
    private func host() throws -> BerthHost {
        let host = try workspace.makeHost(groups: [:], persistingState: true)
        #expect(host.loadAll().isEmpty)
        return host
    }

    /// The length of the value the probe's last `recall` read (-1: it read nothing).
    private func recalledLength(_ host: BerthHost) throws -> FFIValue {
        try #require(host.generation(of: "org.berth.probe")).call("probe_recalled_length", arguments: [])
    }

    /// The message `action` failed with on the lane.
    private func failure(_ host: BerthHost, _ screen: Router, _ action: String, payload: String) async -> String? {
        do {
            try await host.send(screen: screen.id, action: action, payload: Array(payload.utf8))
            return nil
        } catch {
            return error.message
        }
    }

    @Test("a value persisted by one screen is read back during a lane call, through the call's own screen and through another open screen's handle")
    func ownAndOtherScreen() async throws {
        workspace.stageProbe()
        let host = try host()
        defer { host.shutdown() }
        let first = try host.push("probe")
        let second = try host.push("probe")
        try await host.send(screen: first.id, action: "persist", payload: [])
        try await host.send(screen: second.id, action: "recall", payload: [])
        #expect(try recalledLength(host) == .int32(5), "'hello', through the call's own screen")
        // The first screen is not the call's: the main actor answers it.
        try await host.send(screen: second.id, action: "recall-first", payload: [])
        #expect(try recalledLength(host) == .int32(5), "'hello', through the first screen's handle")
    }

    @Test("a key the manifest does not declare is refused during a lane call with the line the main actor gives, naming the key")
    func undeclaredKey() async throws {
        workspace.stageProbe()
        let host = try host()
        defer { host.shutdown() }
        let screen = try host.push("probe")
        let message = try #require(await failure(host, screen, "recall", payload: "secret"), "an undeclared key was read")
        #expect(message.contains("persist_read: key 'secret' is not in org.berth.probe's manifest persist list"), "\(message)")
        #expect(try recalledLength(host) == .int32(-1))
    }

    @Test("without state.persist a read during a lane call is refused naming the capability, with a denied event naming the key")
    func refusedGrant() async throws {
        workspace.stageProbe { $0["capabilities"] = [String]() }
        let host = try host()
        defer { host.shutdown() }
        let screen = try host.push("probe")
        let message = try #require(await failure(host, screen, "recall", payload: "note"), "a read without state.persist succeeded")
        #expect(message.contains("lacks the capability 'state.persist'"), "\(message)")
        #expect(try recalledLength(host) == .int32(-1))
        let denied = host.events.filter { $0.kind == .denied }
        #expect(denied.count == 1, "\(denied.map(\.description))")
        #expect(denied.first?.message.contains("persist_read note") == true, "\(denied.map(\.description))")
    }
}
