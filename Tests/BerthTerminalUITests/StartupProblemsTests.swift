@_spi(Engine) import BerthRuntime
import BerthTerminalUI
import BerthTestSupport
import Testing

/// A plugin that did not load before the front end started is on the screen, not only in
/// the lines the full screen covered.
@Suite("Terminal UI: problems from before it started") @MainActor
struct StartupProblemsTests {
    @Test("a plugin refused and one that failed to load at startup are the banner; the inspector has the whole history; Esc clears it")
    func startupBanner() async throws {
        let workspace = PluginWorkspace()
        workspace.stage("counter.json")
        // Inbox requires Greeter, which is not there; a manifest with a typo is refused.
        workspace.stage("inbox.json")
        workspace.stage("greeter.json", as: "typo") { manifest in
            manifest["versoin"] = manifest["version"]
            manifest["version"] = nil
        }
        let host = try workspace.makeHost()
        let errors = host.activateDiscovered()
        #expect(errors.map(\.plugin) == ["com.example.inbox"])
        #expect(host.plugins["com.example.counter"]?.generation != nil)
        let terminal = HeadlessTerminal(host: host, width: 100, height: 30)
        defer {
            terminal.app.detach()
            host.shutdown()
        }
        let text = terminal.text
        #expect(text.contains("✖ did not load: "), "\(text)")
        #expect(text.contains("(and 1 other plugin: F2)"), "\(text)")
        await terminal.press(.function(2))
        #expect(terminal.text.contains("com.example.inbox: requires"), "the replayed failed event: \(terminal.text)")
        #expect(terminal.text.contains("typo"), "\(terminal.text)")
        await terminal.press(.function(2))
        await terminal.press(.escape)
        #expect(!terminal.text.contains("✖"), "\(terminal.text)")
    }

    @Test("a host whose plugins all loaded starts without a banner")
    func noBanner() throws {
        let workspace = PluginWorkspace()
        workspace.stage("counter.json")
        let host = try workspace.makeHost()
        #expect(host.activateDiscovered().isEmpty)
        let terminal = HeadlessTerminal(host: host)
        defer {
            terminal.app.detach()
            host.shutdown()
        }
        #expect(!terminal.text.contains("✖"), "\(terminal.text)")
        #expect(host.plugins["com.example.counter"]?.generation != nil)
    }
}
