import Foundation
import Testing
import BerthTestSupport

/// The `actions` command and the `send` it guards: a screen's declared actions come from its
/// plugin's manifest (written by `berth pack` from `Screen.actions`).
@Suite("berth host: declared actions", .blocking)
struct ActionsCLITests {
    /// Counter declares its actions; the Greeter, staged without its `actions`, declares none.
    private func workspace() -> PluginWorkspace {
        let workspace = PluginWorkspace()
        workspace.stage("counter.json")
        workspace.stage("greeter.json") { $0["actions"] = nil }
        return workspace
    }

    @Test("actions lists the visible screen's declared actions; send refuses an undeclared name with a did-you-mean; a screen declaring none takes any name")
    func transcript() throws {
        let workspace = workspace()
        let script = """
            open counter
            actions
            actions --json
            send incremnt
            send jump
            send increment
            send #1 reset
            open hello
            actions
            actions #1
            send shout
            actions #9
            actions now
            """
        var output = try BerthProcess.run(["run", "--plugins", "plugins", "--no-socket", "--script", "-"], in: workspace.root, input: script)
        output.standardOutput = output.standardOutput.replacingOccurrences(of: #"pid [0-9]+"#, with: "pid _", options: .regularExpression)
        #expect(output.status == 1, "the refused sends fail the script: \(output.standardError)")
        #expect(output.standardOutput == ExpectedOutput.text("actions", actual: output.standardOutput))
        let errors = output.standardError.split(separator: "\n").map(String.init).filter { $0.hasPrefix("error: ") }
        #expect(errors == [
            "error: com.example.counter/counter declares no action 'incremnt' (did you mean 'increment'?); not sent (it declares increment, decrement, reset, report)",
            "error: com.example.counter/counter declares no action 'jump'; not sent (it declares increment, decrement, reset, report)",
            "error: com.example.greeter/hello action 'shout' failed: hello has only the action 'wave'",
            "error: no open screen 9",
            "error: usage: actions [#SCREEN] [--json]",
        ], "\(output.standardError)")
        #expect(!output.standardError.contains("counter has no action"), "a refused action never reaches the screen")
        #expect(output.standardError.contains("count is 1") && output.standardError.contains("count is 0"), "\(output.standardError)")
    }

    @Test("every example manifest lists exactly the actions its code declares (validate checks them against berth_describe_v1)")
    func exampleManifestsAgree() throws {
        let workspace = PluginWorkspace()
        let names = ["counter", "greeter", "inbox", "profile", "userpicker"]
        for name in names { workspace.stage("\(name).json") }
        let folders = try FileManager.default.contentsOfDirectory(atPath: workspace.plugins).sorted().map { "plugins/\($0)" }
        #expect(folders.count == names.count)
        let output = try BerthProcess.run(["validate"] + folders, in: workspace.root)
        #expect(output.status == 0, "\(output.standardOutput)\(output.standardError)")
        #expect(!output.standardOutput.contains("actions:"), "\(output.standardOutput)")
    }

    @Test("berth host actions answers over the control socket, and a refused send is an error reply")
    func overTheSocket() throws {
        let host = try RunningHost(workspace())
        _ = try host.command(["open", "counter"])
        let listed = try BerthProcess.run(["host", "--socket", host.socket, "actions"], in: host.workspace.root)
        #expect(listed.status == 0, "\(listed.standardError)")
        #expect(RunningHost.squeezed(listed.standardOutput).contains("report Logs the count, the ticks and the persisted total"), "\(listed.standardOutput)")
        let json = try BerthProcess.run(["host", "--socket", host.socket, "actions", "--json"], in: host.workspace.root)
        let actions = try #require(try JSONSerialization.jsonObject(with: Data(json.standardOutput.utf8)) as? [[String: String]])
        #expect(actions.map { $0["name"] } == ["increment", "decrement", "reset", "report"])
        let refused = try BerthProcess.run(["host", "--socket", host.socket, "send", "rest"], in: host.workspace.root)
        #expect(refused.status != 0)
        #expect(refused.standardError.contains("declares no action 'rest' (did you mean 'reset'?); not sent"), "\(refused.standardError)")
    }
}
