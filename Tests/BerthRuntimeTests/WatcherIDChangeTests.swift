import BerthRuntime
import BerthTestSupport
import Foundation
import Testing

/// Issue 29, item 11: under --watch, invalid new content leaves the running generation and
/// its screens alone, also when the new manifest names another id.
@MainActor
@Suite("Watcher: a folder switched to another id")
struct WatcherIDChangeTests {
    @Test("a new id the library does not answer to leaves the running plugin and its open screen alone")
    func invalidNewID() async throws {
        let workspace = PluginWorkspace()
        let folder = workspace.stageProbe()
        let host = try workspace.makeHost()
        try host.load("org.berth.probe")
        let screen = try host.push("org.berth.probe/probe")
        try host.startWatching(debounce: .milliseconds(50))
        defer { host.stopWatching() }
        // The same library under a manifest that now says another id: it validates, but the
        // library's table says org.berth.probe, so it cannot load.
        let data = try Data(contentsOf: URL(fileURLWithPath: folder + "/plugin.json"))
        var manifest = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        manifest["id"] = "org.berth.renamed"
        workspace.write(manifest: manifest, in: folder)
        // A deadline, not a timing: it returns once the event is there. A full parallel run
        // (more suites this round, several holding the shared main actor or the cooperative
        // pool with blocking calls) delayed the watcher's delivery past 120 s (CI of d15a97e).
        let failed = await eventuallyAsync(timeout: .seconds(420)) { host.events.contains { $0.kind == .failed && $0.message.contains("did not load") } }
        #expect(failed, "\(host.events.map(\.description))")
        #expect(host.events.contains { $0.message.contains("org.berth.probe generation 1 stays") })
        #expect(host.generation(of: "org.berth.probe") != nil)
        #expect(host.router(screen.id) != nil, "the open screen was closed")
        #expect(host.plugins["org.berth.renamed"] == nil)
    }
}
