import Foundation
import Testing
@_spi(Engine) @testable import BerthRuntime
import BerthTestSupport

/// Worker groups (`"isolation": {"group": NAME}`): members share one worker and so share
/// services; a crash closes that group's screens only; a reload of one member loads its new
/// generation into the same worker; a resolve across groups is refused in one line.
@Suite("Worker groups") @MainActor
struct WorkerGroupTests {
    private let workspace = PluginWorkspace()
    private let recorder = LogRecorder()

    /// Adds `{"group": group}` to a staged folder's manifest.
    private func join(_ folder: String, group: String) throws {
        let path = (folder as NSString).appendingPathComponent("plugin.json")
        let data = try #require(FileManager.default.contents(atPath: path))
        var manifest = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        manifest["isolation"] = ["group": group]
        workspace.write(manifest: manifest, in: folder)
    }

    /// Greeter and Profile (the example group, greeter-family), UserPicker, and a host that
    /// runs every plugin isolated unless its manifest says otherwise.
    private func examples() throws -> BerthHost {
        for manifest in ["greeter.json", "userpicker.json", "profile.json", "counter.json"] { workspace.stage(manifest) }
        let host = try workspace.makeHost(recorder: recorder, isolation: TestIsolation.settings(.manifest(default: .process)))
        let errors = host.loadAll()
        guard errors.isEmpty else { throw errors[0] }
        return host
    }

    @Test("the example manifests put Greeter and Profile in one group: one worker, and Profile uses Greeter's service through it")
    func examplesShareAWorker() throws {
        let host = try examples()
        let greeter = try #require(host.generation(of: "com.example.greeter")?.workerPID)
        let profile = try #require(host.generation(of: "com.example.profile")?.workerPID)
        let counter = try #require(host.generation(of: "com.example.counter")?.workerPID)
        #expect(greeter == profile)
        #expect(counter != greeter, "a plugin without a group has a worker of its own")
        let screen = try host.push("profile")
        try host.sendBlocking(screen: screen.id, action: "greet", payload: [])
        try host.sendBlocking(screen: screen.id, action: "greet", payload: [])
        #expect(recorder.matching("profile: Greetings, stranger (greeting #2)").count == 1, "one singleton, made in the group's worker")
    }

    @Test("reloading one member loads its new generation into the group's worker; the other member's screens stay open")
    func reloadOneMember() throws {
        let host = try examples()
        let worker = try #require(host.generation(of: "com.example.greeter")?.workerPID)
        let profile = try host.push("profile")
        try host.sendBlocking(screen: profile.id, action: "greet", payload: [])
        try host.reload("com.example.greeter")
        #expect(host.generation(of: "com.example.greeter")?.workerPID == worker)
        #expect(!profile.isReleased, "Profile's screen was not touched")
        #expect(recorder.matching("greeting service released").count == 1, "the old generation's singleton went first")
        try host.sendBlocking(screen: profile.id, action: "greet", payload: [])
        #expect(recorder.matching("greeting service created").count == 2, "the new generation made its own")
        #expect(host.events.contains { $0.subject == .plugin("com.example.greeter") && $0.message.contains("the worker of group 'greeter-family' goes on") })
    }

    @Test("a member discovered after its group's worker started joins the group: a new group worker covers every member, their screens reopen in place")
    func lateMember() throws {
        workspace.stage("greeter.json")
        workspace.stage("userpicker.json")
        let host = try workspace.makeHost(recorder: recorder, isolation: TestIsolation.settings(.manifest(default: .process)))
        #expect(host.loadAll().isEmpty)
        let first = try #require(host.generation(of: "com.example.greeter")?.workerPID)
        let hello = try host.push("hello")
        workspace.stage("profile.json")
        host.discover()
        try host.load("com.example.profile")
        let greeter = try #require(host.generation(of: "com.example.greeter")?.workerPID)
        #expect(host.generation(of: "com.example.profile")?.workerPID == greeter, "one worker for the group")
        #expect(greeter != first, "a new worker, its sandbox made for every member")
        #expect(!hello.isReleased && hello.module?.isActive == true, "Greeter's screen reopened in place")
        let profile = try host.push("profile")
        try host.sendBlocking(screen: profile.id, action: "greet", payload: [])
        #expect(recorder.matching("profile: Greetings, stranger").count == 1, "Profile uses Greeter's service in the shared worker")
        #expect(host.events.contains { $0.subject == .plugin("com.example.greeter") && $0.message.contains("moves to a new worker") }, "the move is told")
    }

    @Test("a crash of a group's worker closes that group's screens only, and each member starts again on its next use")
    func crashClosesTheGroupOnly() async throws {
        try join(workspace.stageCrasher(), group: "crashers")
        try join(workspace.stageFixture(folder: "scoped", entry: "fixture_entry_scoped", id: "org.berth.scoped") { $0["routes"] = ["scoped"] },
                 group: "crashers")
        workspace.stage("counter.json")
        let host = try workspace.makeHost(recorder: recorder, isolation: TestIsolation.settings(.manifest(default: .process), unresponsive: .seconds(300)),
                                          groups: ["crashers": ["org.berth.crasher", "org.berth.scoped"]])
        #expect(host.loadAll().isEmpty)
        #expect(host.generation(of: "org.berth.crasher")?.workerPID == host.generation(of: "org.berth.scoped")?.workerPID)
        let counter = try host.push("counter")
        let scoped = try host.push("scoped")
        let crasher = try host.push("segv-action")
        #expect(throws: ScreenError.self) { try host.sendBlocking(screen: crasher.id, action: "poke", payload: []) }
        await eventuallyAsync { host.events.filter { $0.kind == .crashed }.count >= 2 }
        #expect(Set(host.events.filter { $0.kind == .crashed }.map(\.subject)) == [.plugin("org.berth.crasher"), .plugin("org.berth.scoped")])
        #expect(scoped.isReleased && crasher.isReleased)
        #expect(!counter.isReleased, "the other worker's screen stays")
        #expect(host.plugins["org.berth.scoped"]?.state == .crashed)
        let again = try host.push("scoped")
        #expect(!again.isReleased, "a new group worker on the next use")
    }

    @Test("a member loaded while its group's worker runs another member's load is refused at once in one line, not made to wait; loaded again once that returns, it joins that worker")
    func memberRefusedWhileItsGroupLoads() async throws {
        try join(workspace.stageCrasher(entry: "berth_crasher_entry_gate"), group: "gated")
        try join(workspace.stageFixture(folder: "scoped", entry: "fixture_entry_scoped", id: "org.berth.scoped") { $0["routes"] = ["scoped"] },
                 group: "gated")
        let host = try workspace.makeHost(recorder: recorder, isolation: TestIsolation.settings(.manifest(default: .process)),
                                          groups: ["gated": ["org.berth.crasher", "org.berth.scoped"]])
        // The crasher's gated entry waits at the gate "load" in its runtime folder.
        let gate = host.runtimeDirectory.folder(of: "org.berth.crasher")
        defer { FileManager.default.createFile(atPath: gate + "/leave-load", contents: nil) }
        let first = Task { @MainActor in try await host.loadOffMain("org.berth.crasher") }
        for _ in 0..<6_000 where !FileManager.default.fileExists(atPath: gate + "/entered-load") && recorder.matching("entered load").isEmpty {
            try await Task.sleep(for: .milliseconds(10))
        }
        try #require(FileManager.default.fileExists(atPath: gate + "/entered-load") || !recorder.matching("entered load").isEmpty,
                     "the crasher's entry reached its gate: \(recorder.all)")

        do {
            try await host.loadOffMain("org.berth.scoped")
            Issue.record("a member loaded while its group's worker ran another member's load")
        } catch {
            #expect(error.description.hasPrefix("org.berth.scoped: its group 'gated' is busy: org.berth.crasher load of generation 1 has run for "),
                    "\(error.description)")
            #expect(error.description.hasSuffix(" ms; load it once that returns"), "\(error.description)")
        }
        #expect(host.generation(of: "org.berth.scoped") == nil)

        FileManager.default.createFile(atPath: gate + "/leave-load", contents: nil)
        try await first.value
        try await host.loadOffMain("org.berth.scoped")
        #expect(host.generation(of: "org.berth.scoped")?.workerPID == host.generation(of: "org.berth.crasher")?.workerPID)
    }

    @Test("a resolve across groups is refused with one line naming both plugins, their groups and the fix")
    func acrossGroups() throws {
        workspace.stage("greeter.json")
        try join(workspace.stageFixture(folder: "scoped", entry: "fixture_entry_scoped", id: "org.berth.scoped") { $0["routes"] = ["scoped"] },
                 group: "other")
        let host = try workspace.makeHost(recorder: recorder, isolation: TestIsolation.settings(.manifest(default: .process)))
        #expect(host.loadAll().isEmpty)
        let screen = try host.push("scoped")
        #expect { try host.sendBlocking(screen: screen.id, action: "key", payload: Array("com.example.greeter/Greeting".utf8)) } throws: { error in
            let text = "\(error)"
            return text.contains("provided by com.example.greeter in worker group 'greeter-family', but org.berth.scoped runs in worker group 'other'")
                && text.contains("put both in one worker group") && !text.contains("\n")
        }
    }

    @Test("a group is a name of letters, digits, '-', '_' or '.', in an object with nothing else")
    func manifestField() throws {
        for (value, accepted) in [(["group": "greeter-family"], true), (["group": ""], false), (["group": "a b"], false),
                                  (["group": "g", "mode": "process"], false)] as [([String: String], Bool)] {
            let folder = workspace.stage("counter.json", as: "counter-\(UUID().uuidString.prefix(6))") { $0["isolation"] = value }
            let result = PluginValidator.validate(path: folder)
            if accepted {
                #expect(try result.get().manifest.isolationGroup == "greeter-family")
            } else {
                guard case .failure(let failure) = result else { Issue.record("\(value) was accepted"); continue }
                #expect(failure.oneLine.contains("isolation"), "\(failure.oneLine)")
            }
        }
    }
}
