import Foundation
import Testing
import BerthTestSupport

/// Isolation as a user sees it: a host script that meets crashing and hanging plugins.
@Suite("berth run --isolation process")
struct IsolationCLITests {
    @Test("a plugin that segfaults, aborts, traps, exits or hangs in an action: the script opens another plugin's screen after each, and the host ends normally")
    func scriptGoesOn() throws {
        let workspace = PluginWorkspace()
        workspace.stage("counter.json")
        workspace.stageCrasher()
        let hows = ["segv", "abort", "trap", "exit", "hang"]
        let script = (["load all"] + hows.flatMap { how in ["open \(how)-action", "send poke", "open counter"] } + ["screens", "quit"])
            .joined(separator: "\n")
        let output = try BerthProcess.run(["run", "--plugins", "plugins", "--isolation", "process", "--unresponsive-ms", "500",
                                           "--crash-limit", "10", "--script", "-"], in: workspace.root, input: script)
        // The failed `send`s make the script's status 1; a host killed by a signal would not print its goodbye.
        #expect(output.status == 1, "\(output.standardError)")
        let reasons = ["SIGSEGV", "SIGABRT", "SIGILL", "exited with status 3", "unresponsive"]
        for (how, reason) in zip(hows, reasons) {
            #expect(output.standardOutput.contains("org.berth.crasher: the worker of org.berth.crasher crashed (\(reason)): Fatal error: crasher fails by \(how)"),
                    "\(how): \(output.standardOutput.suffix(2_000))")
        }
        // Five counters opened after the crashes, all still open at the end; the crasher's screens are gone.
        let afterScreens = output.standardOutput.components(separatedBy: "> screens").last ?? ""
        let table = afterScreens.components(separatedBy: "> quit").first ?? ""
        let rows = table.split(separator: "\n").filter { $0.first?.isNumber == true }
        #expect(rows.count == 5 && rows.allSatisfy { $0.contains("com.example.counter") }, "\(table)")
        #expect(output.standardOutput.contains("com.example.counter: generation 1 unloaded (its worker ended)"), "the host ends its plugins on quit")
    }
}
