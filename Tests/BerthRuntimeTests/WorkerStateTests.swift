import Foundation
import Testing
@_spi(Engine) @testable import BerthRuntime
import BerthTestSupport

/// A plugin reads the host's state storage as it is now, in both modes: a worker keeps no
/// copy of it between renders, so a slot the host dropped (a branch no longer taken, the
/// render-pass GC, a release, a reload without --keep-state) is gone for the plugin too.
/// The fixture (`fixture_entry_scoped`) renders through the v1.0 `render`, reading its slot.
@Suite("State in a worker is never stale") @MainActor
struct WorkerStateTests {
    private let workspace = PluginWorkspace()
    private let recorder = LogRecorder()

    private func host() throws -> BerthHost {
        workspace.stageFixture(folder: "scoped", entry: "fixture_entry_scoped", id: "org.berth.scoped") { $0["routes"] = ["scoped"] }
        let host = try workspace.makeHost(recorder: recorder)
        try host.load("org.berth.scoped")
        return host
    }

    private func peek(_ host: BerthHost, _ screen: Router) throws -> String? {
        try host.sendBlocking(screen: screen.id, action: "peek", payload: [])
        return recorder.matching("peek: ").last.map { String($0[$0.range(of: "peek: ")!.upperBound...]) }
    }

    @Test("a slot the host drops after a render (as a branch switch does) is not read by the next action")
    func droppedAfterRender() throws {
        let host = try host()
        let screen = try host.push("scoped")
        try host.sendBlocking(screen: screen.id, action: "put", payload: [])
        _ = try host.render()
        #expect(try peek(host, screen) == "7", "the render read the slot, so it survived")
        let storage = try #require(screen.module?.stateStorage)
        #expect(storage.invalidateDescendants(of: "Scoped") == 1)
        #expect(try peek(host, screen) == "none")
    }

    @Test("a slot the render-pass GC dropped, and a reload without --keep-state, leave nothing to read")
    func gcAndReload() throws {
        let host = try host()
        let screen = try host.push("scoped")
        try host.sendBlocking(screen: screen.id, action: "put", payload: [])
        let storage = try #require(screen.module?.stateStorage)
        storage.write(identity: "Scoped/Gone", index: 0, fingerprint: 1, bytes: [1])
        _ = try host.render()
        #expect(!storage.slots.keys.contains { $0.identity == "Scoped/Gone" }, "the GC dropped the slot no render read")
        #expect(try peek(host, screen) == "7")
        try host.reload("org.berth.scoped")
        let reopened = try #require(host.openRouters.last)
        #expect(try peek(host, reopened) == "none")
    }
}
