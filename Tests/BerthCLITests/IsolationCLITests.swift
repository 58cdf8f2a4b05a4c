import Foundation
import Testing
import BerthTestSupport

/// Isolation as a user sees it: a host script that meets crashing and hanging plugins.
@Suite("berth run --isolation process", .blocking)
struct IsolationCLITests {
    @Test("a plugin that segfaults, aborts, traps or exits in an action: the script opens another plugin's screen after each, and the host ends normally")
    func scriptGoesOn() throws {
        // No hang here, so no call needs the watchdog: a budget no healthy call on a loaded
        // machine comes near. Each crash is seen when the worker's end of the channel closes.
        try runScript(hows: ["segv", "abort", "trap", "exit"], reasons: ["SIGSEGV", "SIGABRT", "SIGILL", "exited with status 3"],
                      unresponsiveMilliseconds: 600_000)
    }

    @Test("a plugin that hangs in an action is ended as unresponsive, and the script goes on to another plugin's screen")
    func hangGoesOn() throws {
        // The one call that must outlast the budget hangs for good; the calls that must fit in
        // it (Counter's create, activate, render and ticks) get 10 s each.
        try runScript(hows: ["hang"], reasons: ["unresponsive"], unresponsiveMilliseconds: 10_000)
    }

    /// Opens each `hows` action screen of the crasher, pokes it, then opens Counter; expects
    /// each crash named with its reason, and every Counter still open at the end.
    private func runScript(hows: [String], reasons: [String], unresponsiveMilliseconds: Int) throws {
        let workspace = PluginWorkspace()
        workspace.stage("counter.json")
        workspace.stageCrasher()
        let script = (["load all"] + hows.flatMap { how in ["open \(how)-action", "send poke", "open counter"] } + ["screens", "quit"])
            .joined(separator: "\n")
        let output = try BerthProcess.run(["run", "--plugins", "plugins", "--isolation", "process", "--unresponsive-ms", "\(unresponsiveMilliseconds)",
                                           "--crash-limit", "10", "--script", "-"], in: workspace.root, input: script)
        // The failed `send`s make the script's status 1; a host killed by a signal would not print its goodbye.
        #expect(output.status == 1, "\(output.standardError)")
        for (how, reason) in zip(hows, reasons) {
            #expect(output.standardOutput.contains("org.berth.crasher: the worker of org.berth.crasher crashed (\(reason)): Fatal error: crasher fails by \(how)"),
                    "\(how): \(output.standardOutput.suffix(2_000))")
        }
        // A counter opened after each crash, all still open at the end; the crasher's screens are gone.
        let afterScreens = output.standardOutput.components(separatedBy: "> screens").last ?? ""
        let table = afterScreens.components(separatedBy: "> quit").first ?? ""
        let rows = table.split(separator: "\n").filter { $0.first?.isNumber == true }
        #expect(rows.count == hows.count && rows.allSatisfy { $0.contains("com.example.counter") }, "\(table)")
        #expect(output.standardOutput.contains("com.example.counter: generation 1 unloaded (its worker ended)"), "the host ends its plugins on quit")
    }
}

/// An in-process plugin that hangs in an action: the action runs on the plugin's lane, so the
/// host goes on; it cannot stop that thread, so it leaves around it when told to.
@Suite("A host with an in-process plugin that hangs", .blocking)
struct StuckHostTests {
    @Test("status answers and names the running call; SIGTERM ends the host with status 1, naming the call it left running, and removes its socket and runtime folder")
    func stuck() throws {
        let workspace = PluginWorkspace()
        workspace.stageCrasher(isolation: "in-process")
        let host = try RunningHost(workspace)
        try host.wait(for: "org.berth.crasher")
        _ = try host.command(["open", "hang-action"])
        let before = try host.command(["status"])
        let runtimeFolders = before.split(separator: "\n").filter { $0.hasPrefix("runtime folder: ") }.map { String($0.dropFirst("runtime folder: ".count)) }
        #expect(runtimeFolders.count == 1, "\(before)")
        // This client waits for an answer that never comes; status must not.
        let stuckClient = try ControlConnectionForTests(host.socket)
        defer { stuckClient.close() }
        stuckClient.sendFrame(Array(#"{"args":["send","poke"]}"#.utf8))
        var status = ""
        eventually(timeout: .seconds(120), every: .milliseconds(100)) {
            status = (try? host.command(["status"])) ?? ""
            return status.contains("busy:")
        }
        #expect(status.contains("busy: org.berth.crasher/hang-action action 'poke'"), "\(status)\n\(host.log)")
        #expect(kill(host.process.processIdentifier, SIGTERM) == 0)
        // The watchdog's grace is 3 s; the deadline leaves room for a loaded machine.
        eventually(timeout: .seconds(60)) { !host.process.isRunning }
        // Required: reading the status of a process still running traps the whole test run.
        try #require(!host.process.isRunning, "SIGTERM ended the stuck host: \(host.log)")
        #expect(host.process.terminationStatus == 1)
        #expect(host.log.contains("error: left org.berth.crasher/hang-action action 'poke' (screen 1) running for"), "\(host.log)")
        #expect(!FileManager.default.fileExists(atPath: host.socket), "the socket is removed")
        for folder in runtimeFolders { #expect(!FileManager.default.fileExists(atPath: folder)) }
    }
}
