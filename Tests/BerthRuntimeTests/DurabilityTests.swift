import Foundation
import Testing
@_spi(Engine) @testable import BerthRuntime
import BerthTestSupport

/// Persisted values when an isolated plugin's worker dies in the middle of writing them:
/// the writes go through the host, which commits each one before it answers, so every
/// value the plugin saw committed is in the database and the file stays consistent.
@Suite("Persisted values when a worker is killed mid-write") @MainActor
struct DurabilityTests {
    @Test("a worker SIGKILLed while it calls persist_write in a loop: the host stays up, every committed value is there")
    func workerKilledWhileWriting() async throws {
        let workspace = PluginWorkspace()
        let folder = workspace.stageCrasher(isolation: "process")
        // Every "committed V" line must reach the log: the default log rate (100 lines a
        // second, Docs/worker-limits.md) would drop some of a tight write loop's lines.
        let manifestPath = folder + "/plugin.json"
        var manifest = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: manifestPath))) as? [String: Any])
        manifest["limits"] = ["logRate": 10_000]
        workspace.write(manifest: manifest, in: folder)
        let recorder = LogRecorder()
        var settings = TestIsolation.settings(.manifest(default: .process))
        settings.crashLimit = 1_000
        let state = (workspace.root as NSString).appendingPathComponent("state")
        let host = try BerthHost(configuration: .init(pluginFolders: [workspace.plugins], runtimeBase: workspace.runtimeBase,
                                                      stateDirectory: state, logger: recorder.logger(), isolation: settings))
        host.discover()
        try host.load("org.berth.crasher")
        let store = try #require(host.persistentStore)
        var generator = SystemRandomNumberGenerator()
        let rounds = 8
        for round in 1...rounds {
            recorder.clear()
            let screen = try host.push("ok")
            let worker = try #require(host.generation(of: "org.berth.crasher")?.workerPID)
            // The main actor is inside the action, serving the worker's persist_write calls;
            // another thread kills the worker once it has committed a few values.
            let delay = UInt32.random(in: 2_000...30_000, using: &generator)
            let killer = Thread {
                eventually(timeout: .seconds(60)) { !recorder.matching("committed ").isEmpty }
                usleep(delay)
                kill(worker, SIGKILL)
            }
            killer.start()
            #expect(throws: ScreenError.self) { try host.sendBlocking(screen: screen.id, action: "persist", payload: Array("100000000".utf8)) }
            await eventuallyAsync { host.events.filter { $0.kind == .crashed }.count >= round }
            #expect(host.events.filter { $0.kind == .crashed }.count == round)
            let committed = recorder.matching("committed ").compactMap { Int($0.split(separator: " ").last ?? "") }
            let last = try #require(committed.max(), "round \(round): no value was committed before the kill")
            let stored = try #require(try store.read(plugin: "org.berth.crasher", key: "n"))
            let value = try #require(Int(String(decoding: stored, as: UTF8.self)))
            // At most the one write in flight when the worker died may be there beyond it.
            #expect(value == last || value == last + 1, "round \(round): committed \(last), stored \(value)")
            #expect(try store.integrityCheck() == "ok")
        }
        // The host is still up and the plugin comes back: it resumes from the stored value.
        recorder.clear()
        let screen = try host.push("ok")
        try host.sendBlocking(screen: screen.id, action: "persist", payload: Array("3".utf8))
        let resumed = try #require(recorder.matching("resumed at ").first?.split(separator: " ").last.flatMap { Int($0) })
        let stored = try #require(try store.read(plugin: "org.berth.crasher", key: "n"))
        #expect(Int(String(decoding: stored, as: UTF8.self)) == resumed + 3)
        host.shutdown()
        // A fresh connection to the file (as the next host would open it) reads the same value.
        #expect(try PersistentStore(folder: state).read(plugin: "org.berth.crasher", key: "n") == stored)
    }
}
