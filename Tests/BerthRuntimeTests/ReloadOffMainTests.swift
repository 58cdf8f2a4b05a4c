import Foundation
import Testing
@_spi(Engine) @testable import BerthRuntime
import BerthTestSupport

/// Reloads with their validation and shadow copy off the main actor
/// (`BerthHost.reloadOffMain`): the same transaction as `reload` once the folder is
/// checked, in the seeds' order. Both modes, as the test matrix says.
@Suite("Reloads off the main actor", .serialized) @MainActor
struct ReloadOffMainTests {
    let workspace = PluginWorkspace()
    let recorder = LogRecorder()
    let host: BerthHost

    init() throws {
        host = try workspace.makeCounterAndCrasherHost(recorder: recorder)
    }

    /// The shadow copies in the plugin's runtime folder.
    private func shadowCopies(of id: String) -> [String] {
        let folder = host.runtimeDirectory.folder(of: id)
        return ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).sorted()
    }

    @Test("it replaces the generation and reopens its screens as reload does: out deepest first, back in, state kept when asked")
    func reloadsAsReloadDoes() async throws {
        let counter = try host.push("com.example.counter/counter", argument: Array("3600000".utf8))
        let over = try host.push("com.example.counter/counter", argument: Array("3600000".utf8))
        try await host.send(screen: counter.id, action: "increment", payload: [])
        let mark = host.events.count

        let fresh = try await host.reloadGenerationOffMain("com.example.counter", keepState: true)
        #expect(fresh.number == 2)
        #expect(counter.module?.generation === fresh && over.module?.generation === fresh)
        let order = host.events[mark...].compactMap { event -> String? in
            guard case .screen(let id) = event.subject, [.deactivated, .released, .activated].contains(event.kind) else { return nil }
            return "\(event.kind) \(id)"
        }
        #expect(order == ["deactivated \(over.id)", "deactivated \(counter.id)", "released \(over.id)", "released \(counter.id)",
                          "activated \(counter.id)", "activated \(over.id)"], "\(order)")
        #expect(host.events[mark...].contains { $0.kind == .reloaded })
        try await host.send(screen: counter.id, action: "report", payload: [])
        #expect(recorder.all.contains { $0.contains("count 1, ticks") }, "the count came across: \(recorder.all)")
        #expect(shadowCopies(of: "com.example.counter").count == 1, "only the new generation's copy: \(shadowCopies(of: "com.example.counter"))")
    }

    @Test("a folder that no longer validates fails at validate, in one line; the old generation and its screen stay, and the next reload takes the next number")
    func failsAtValidate() async throws {
        let screen = try host.push("org.berth.crasher/ok")
        let manifest = workspace.plugins + "/org.berth.crasher/plugin.json"
        let good = try Data(contentsOf: URL(fileURLWithPath: manifest))
        try Data("{ not json".utf8).write(to: URL(fileURLWithPath: manifest))
        do {
            try await host.reloadOffMain("org.berth.crasher")
            Issue.record("a broken manifest reloaded")
        } catch {
            #expect(error.message.contains("reload failed at validate") && error.message.contains("generation 1 stays loaded"), "\(error.message)")
            #expect(!error.message.contains("\n"))
        }
        #expect(screen.module?.generation.number == 1 && screen.module?.isActive == true)
        try good.write(to: URL(fileURLWithPath: manifest))
        let fresh = try await host.reloadGenerationOffMain("org.berth.crasher")
        #expect(fresh.number == 2)
        #expect(screen.module?.generation === fresh && screen.module?.isActive == true)
        #expect(shadowCopies(of: "org.berth.crasher").count == 1, "\(shadowCopies(of: "org.berth.crasher"))")
    }

    @Test("a reload of a plugin inside an action is refused at once, naming the call; it goes through once the action returns")
    func refusedWhileBusy() async throws {
        let screen = try host.push("org.berth.crasher/ok")
        let gate = workspace.plugins + "/org.berth.crasher/gate"
        let (host, id) = (host, screen.id)
        let action = Task { @MainActor in try await host.send(screen: id, action: "wait-for", payload: Array(gate.utf8)) }
        defer { if !FileManager.default.fileExists(atPath: gate) { FileManager.default.createFile(atPath: gate, contents: nil) } }
        for _ in 0..<6_000 where screen.module?.isBusy != true { try await Task.sleep(for: .milliseconds(10)) }
        try #require(screen.module?.isBusy == true)
        do {
            try await host.reloadOffMain("org.berth.crasher")
            Issue.record("a busy plugin reloaded")
        } catch {
            #expect(error.description.contains("is busy: action 'wait-for'"), "\(error.description)")
        }
        #expect(FileManager.default.createFile(atPath: gate, contents: nil))
        try await action.value
        #expect(try await host.reloadGenerationOffMain("org.berth.crasher").number == 2)
    }
}
