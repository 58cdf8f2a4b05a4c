import Foundation
import Testing
import BerthTestSupport

/// Capabilities as a user sees them: a refused call is printed as a `denied` event with advice.
@Suite("berth run with capabilities", .blocking)
struct CapabilityCLITests {
    @Test("a plugin without the navigate capability: the send fails naming it, and the host prints the denied event", arguments: ["process", "in-process"])
    func deniedEventPrinted(isolation: String) throws {
        let workspace = PluginWorkspace()
        workspace.stageProbe { $0["capabilities"] = ["tasks"] }
        let script = ["load org.berth.probe", "open probe", "send push-own", "quit"].joined(separator: "\n")
        let output = try BerthProcess.run(["run", "--plugins", "plugins", "--isolation", isolation, "--state-dir", "state", "--script", "-"],
                                          in: workspace.root, input: script)
        #expect(output.status == 1, "the refused send fails the script: \(output.standardError)")
        #expect(output.standardError.contains("navigate: org.berth.probe lacks the capability 'navigate' (declare it in plugin.json \"capabilities\")"),
                "\(output.standardError)")
        #expect(output.standardOutput.contains(
            "  · org.berth.probe: navigate refused: no capability 'navigate' (if you trust the plugin, grant the capability: Plugin(capabilities:) in Swift, \"capabilities\" in a C plugin's plugin.json)"),
                "\(output.standardOutput)")
    }
}
