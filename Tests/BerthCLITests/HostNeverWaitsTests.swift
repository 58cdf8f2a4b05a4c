import Foundation
import Testing
import BerthTestSupport

/// The rule of the lanes: a plugin may wait for the host; the host never waits for a plugin.
/// A real `berth run` with the crasher fixture busy in an action (it waits for a file the
/// test creates) and Counter beside it, in whichever mode the run uses (CI runs both).
@Suite("The host never waits on a plugin", .serialized, .blocking)
struct HostNeverWaitsTests {
    @Test("while a plugin's action runs, status, another screen's action and render answer; the busy screen refuses input, back works at once, and the close runs after the action")
    func busyPluginDelaysOnlyItsScreens() throws {
        let workspace = PluginWorkspace()
        workspace.stage("counter.json")
        workspace.stageCrasher()
        let host = try RunningHost(workspace, arguments: ["--unresponsive-ms", "120000"])
        try host.wait(for: "org.berth.crasher")
        _ = try host.command(["open", "com.example.counter/counter"])
        let busyScreen = try host.command(["open", "org.berth.crasher/ok"])
        let gate = workspace.root + "/plugins/org.berth.crasher/gate"

        // The action waits for the gate on its lane; this client waits for its reply.
        let waiting = try ControlConnectionForTests(host.socket)
        defer { waiting.close() }
        waiting.sendFrame(Array(#"{"args":["send","wait-for","\#(gate)"]}"#.utf8))
        try host.wait(for: "busy: org.berth.crasher/ok action 'wait-for'", in: ["status"])

        // Everything else answers while it runs: another screen's action and its render…
        try counterTakesActions(host, while: "the crasher was busy:\n\(busyScreen)")
        // …and the busy screen refuses input at once, naming the call it is in.
        let refused = (try? host.command(["send", "persist", "1"])) ?? "no reply; host log:\n\(host.log)"
        #expect(refused.contains("is busy: action 'wait-for'"), "\(refused)")
        // The action has still not returned: all of the above happened during it.
        #expect(try host.command(["status"]).contains("busy: org.berth.crasher/ok action 'wait-for'"))

        // Back on the busy screen works at once; its close sequence waits for the action.
        _ = try host.command(["back"])
        let screens = try host.command(["screens"])
        #expect(!screens.contains("org.berth.crasher"), "the busy screen left the tree at once:\n\(screens)")
        #expect(try host.command(["status"]).contains("busy: org.berth.crasher/ok action 'wait-for'"))

        // Released: the action returns, its reply comes, and the lane is free again.
        #expect(FileManager.default.createFile(atPath: gate, contents: nil))
        let reply = try waiting.readReply()
        #expect(reply != nil)
        eventually(timeout: .seconds(30), every: .milliseconds(50)) { host.log.contains("waited") }
        #expect(host.log.contains("waited"), "the action returned after the gate opened")
        eventually(timeout: .seconds(30), every: .milliseconds(50)) { !((try? host.command(["status"])) ?? "busy:").contains("busy:") }
        #expect(!(try host.command(["status"])).contains("busy:"), "\(host.log)")
        _ = try host.command(["open", "org.berth.crasher/ok"])
        let persisted = (try? host.command(["send", "persist", "1"])) ?? "no reply"
        #expect(persisted.contains("committed 1") || host.log.contains("committed 1"), "\(persisted)\n\(host.log)")
    }

    @Test("while a screen a plugin asked for waits inside its create, the asker, Counter and status answer; then it is pushed above the asker")
    func requestedScreenOpensOnItsLane() throws {
        let workspace = PluginWorkspace()
        workspace.stage("counter.json")
        let gate = workspace.stageCrasher()
        workspace.stageCrasher(id: "org.berth.asker", entry: "berth_crasher_entry_asker")
        let host = try RunningHost(workspace, arguments: ["--unresponsive-ms", "120000"])
        try host.wait(for: "org.berth.asker")
        _ = try host.command(["open", "com.example.counter/counter"])
        _ = try host.command(["open", "org.berth.asker/ok"])

        // The asker's action asks for the gated screen; this client waits for the reply.
        let waiting = try ControlConnectionForTests(host.socket)
        defer { waiting.close() }
        waiting.sendFrame(Array(#"{"args":["send","open","org.berth.crasher/gate-create \#(gate)"]}"#.utf8))
        defer { FileManager.default.createFile(atPath: gate + "/leave-create", contents: nil) }
        eventually(timeout: .seconds(30), every: .milliseconds(50)) { host.log.contains("entered create") }
        #expect(host.log.contains("entered create"), "the requested screen's create began:\n\(host.log)")

        // Meanwhile the asker is visible and free, Counter takes actions, status answers.
        #expect(try host.command(["status"]).contains("busy: org.berth.crasher"), "the crasher's lane is in the create")
        let tree = try host.command(["tree"])
        #expect(tree.split(separator: "\n").contains { $0.contains("org.berth.asker/ok") && $0.contains("◀ visible") }, "\(tree)")
        _ = try host.command(["send", "asked"])
        try counterTakesActions(host, while: "the create waited")
        #expect(!host.log.contains("left create"), "all of it while the create waited")

        // Released: the screen is pushed above the asker, and the asker's send returns.
        #expect(FileManager.default.createFile(atPath: gate + "/leave-create", contents: nil))
        #expect(try waiting.readReply() != nil)
        let after = try host.command(["tree"])
        #expect(after.split(separator: "\n").contains { $0.contains("org.berth.crasher/gate-create") && $0.contains("active") && $0.contains("◀ visible") },
                "\(after)")
    }

    @Test("while a task's post waits inside its action, Counter and status answer; a send to that screen waits for the post, then runs")
    func taskPostRunsOnItsLane() throws {
        let workspace = PluginWorkspace()
        let (host, gate) = try startWithWaitingPost(workspace)
        defer { FileManager.default.createFile(atPath: gate + "/leave-action", contents: nil) }
        // The plugin's own log line comes after the call began; wait for it, do not race it.
        eventually(timeout: .seconds(30), every: .milliseconds(50)) { host.log.contains("entered action") }
        #expect(host.log.contains("entered action"), "\(host.log)")

        // The post holds only its own screen: Counter takes actions, status answers.
        try counterTakesActions(host, while: "the post waited")
        // A send to the gate screen waits for the post (no busy refusal); its client waits.
        let waiting = try ControlConnectionForTests(host.socket)
        defer { waiting.close() }
        waiting.sendFrame(Array(#"{"args":["send","asked"]}"#.utf8))
        #expect(try host.command(["status"]).contains("busy: org.berth.crasher/gate-action action 'asked'"))
        #expect(!host.log.contains("ran asked"), "all of it while the post waited")

        // Released: the post's action runs, then the send's.
        #expect(FileManager.default.createFile(atPath: gate + "/leave-action", contents: nil))
        let reply = try #require(try waiting.readReply())
        #expect(!reply.contains("busy"), "\(reply)")
        eventually(timeout: .seconds(30), every: .milliseconds(50)) { host.log.components(separatedBy: "ran asked").count == 3 }
        #expect(host.log.components(separatedBy: "ran asked").count == 3, "the post's action, then the send's:\n\(host.log)")
    }

    @Test("while a task's post waits inside its action, reload and unload of its plugin over the control socket wait for the post; Counter and status answer; then each goes through")
    func reloadAndUnloadWaitForPost() throws {
        let workspace = PluginWorkspace()
        let (host, gate) = try startWithWaitingPost(workspace)
        defer { FileManager.default.createFile(atPath: gate + "/leave-action", contents: nil) }

        // The reload waits for the post; the rest of the host does not.
        let reloading = try ControlConnectionForTests(host.socket)
        defer { reloading.close() }
        reloading.sendFrame(Array(#"{"args":["reload","org.berth.crasher"]}"#.utf8))
        try counterTakesActions(host, while: "a reload waited for the post")
        #expect(try host.command(["status"]).contains("busy: org.berth.crasher/gate-action action 'asked'"))
        #expect(!host.log.contains("generation 2"), "the reload waits for the post:\n\(host.log)")
        #expect(FileManager.default.createFile(atPath: gate + "/leave-action", contents: nil))
        let reloaded = try #require(try reloading.readReply())
        #expect(!reloaded.contains("busy") && host.log.contains("generation 2"), "\(reloaded)\n\(host.log)")
        // The reopened screen's activate posted again, and the open gate let it through.
        eventually(timeout: .seconds(30), every: .milliseconds(50)) { host.log.components(separatedBy: "ran asked").count == 3 }
        #expect(host.log.components(separatedBy: "ran asked").count == 3, "\(host.log)")

        // A new post waits at the closed gate; the unload waits for it, then the plugin goes.
        try FileManager.default.removeItem(atPath: gate + "/leave-action")
        _ = try host.command(["open", "org.berth.crasher/gate-action", gate])
        try host.wait(for: "busy: org.berth.crasher/gate-action action 'asked'", in: ["status"])
        let unloading = try ControlConnectionForTests(host.socket)
        defer { unloading.close() }
        unloading.sendFrame(Array(#"{"args":["unload","org.berth.crasher"]}"#.utf8))
        #expect(try host.command(["status"]).contains("busy: org.berth.crasher/gate-action action 'asked'"))
        #expect(!host.log.contains("generation 2 unloaded"), "the unload waits for the post:\n\(host.log)")
        #expect(FileManager.default.createFile(atPath: gate + "/leave-action", contents: nil))
        let unloaded = try #require(try unloading.readReply())
        #expect(!unloaded.contains("busy"), "\(unloaded)")
        eventually(timeout: .seconds(30), every: .milliseconds(50)) { host.log.contains("generation 2 unloaded") }
        #expect(host.log.contains("generation 2 unloaded"), "\(host.log)")
        #expect(!(try host.command(["screens"])).contains("org.berth.crasher"))
    }

    @Test("back on a screen whose plugin waits inside its deactivate answers at once; Counter and status answer meanwhile; the close ends when the plugin returns")
    func backDoesNotWaitForDeactivate() throws {
        let workspace = PluginWorkspace()
        workspace.stage("counter.json")
        let gate = workspace.stageCrasher()
        let host = try RunningHost(workspace, arguments: ["--unresponsive-ms", "120000"])
        try host.wait(for: "org.berth.crasher")
        _ = try host.command(["open", "com.example.counter/counter"])
        _ = try host.command(["open", "org.berth.crasher/gate-deactivate", gate])
        defer { FileManager.default.createFile(atPath: gate + "/leave-deactivate", contents: nil) }

        let back = try host.command(["back"])
        #expect(!back.contains("error"), "\(back)")
        eventually(timeout: .seconds(30), every: .milliseconds(50)) { host.log.contains("entered deactivate") }
        #expect(host.log.contains("entered deactivate"), "\(host.log)")
        #expect(try host.command(["status"]).contains("busy: org.berth.crasher/gate-deactivate close"))
        try counterTakesActions(host, while: "the crasher was inside its deactivate")
        #expect(!(try host.command(["screens"])).contains("org.berth.crasher"), "the screen left at once")
        #expect(!host.log.contains("left deactivate"), "all of it while the deactivate waited")

        #expect(FileManager.default.createFile(atPath: gate + "/leave-deactivate", contents: nil))
        eventually(timeout: .seconds(30), every: .milliseconds(50)) { !((try? host.command(["status"])) ?? "busy:").contains("busy:") }
        #expect(!(try host.command(["status"])).contains("busy:"), "\(host.log)")
        #expect(host.log.contains("left deactivate"), "\(host.log)")
    }

    /// A host with Counter open and the crasher's gate screen above it, whose activate started
    /// a task that posted the action "asked" to it; returns once that post waits inside the
    /// action at the gate (FOLDER/leave-action lets it go).
    private func startWithWaitingPost(_ workspace: PluginWorkspace) throws -> (host: RunningHost, gate: String) {
        workspace.stage("counter.json")
        let gate = workspace.stageCrasher()
        #expect(FileManager.default.createFile(atPath: gate + "/ask-activate", contents: Data("post".utf8)))
        let host = try RunningHost(workspace, arguments: ["--unresponsive-ms", "120000"])
        try host.wait(for: "org.berth.crasher")
        _ = try host.command(["open", "com.example.counter/counter"])
        _ = try host.command(["open", "org.berth.crasher/gate-action", gate])
        try host.wait(for: "busy: org.berth.crasher/gate-action action 'asked'", in: ["status"])
        return (host, gate)
    }

    /// Counter's screen (the first opened) takes `increment` and `report`, and says so.
    private func counterTakesActions(_ host: RunningHost, while what: String) throws {
        let counter = try #require(host.command(["screens"]).split(separator: "\n").first { $0.contains("com.example.counter") })
        let counterScreen = String(counter.split(separator: " ").first { $0.first?.isNumber == true } ?? "")
        _ = try host.command(["send", "#\(counterScreen)", "increment"])
        _ = try host.command(["send", "#\(counterScreen)", "report"])
        eventually(timeout: .seconds(30), every: .milliseconds(50)) { host.log.contains("count 1, ticks") }
        #expect(host.log.contains("count 1, ticks"), "Counter's actions ran while \(what)\n\(host.log)")
    }
}
