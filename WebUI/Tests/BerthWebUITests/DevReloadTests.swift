import Foundation
import Testing

/// `berth dev --web` on a `berth new` package: a saved edit reaches the open page as a
/// patch, with no page reload and nothing pressed (issue 43's reload flow), in both modes.
@Suite("berth dev --web", .serialized)
struct DevReloadTests {
    @Test("an edited label shows in the browser without a page reload, in both isolation modes")
    func editedLabelIsLive() async throws {
        let workspace = try Workspace()
        let created = Process()
        created.executableURL = URL(fileURLWithPath: try Paths.berthWeb())
        created.arguments = ["new", "Hello", "--path", "hello"]
        created.currentDirectoryURL = URL(fileURLWithPath: workspace.root)
        created.standardOutput = FileHandle.nullDevice
        try created.run()
        created.waitUntilExit()
        try #require(created.terminationStatus == 0, "berth new failed")
        let source = workspace.root + "/hello/Sources/Hello/Hello.swift"
        let original = try String(contentsOfFile: source, encoding: .utf8)
        try #require(original.contains("Text(\"Waved"))
        for (round, isolation) in isolationModes.enumerated() {
            let (from, to) = round == 0 ? ("Waved", "Edited") : ("Edited", "Changed")
            let host = try WebHost(workspace: workspace, isolation: isolation, command: [
                "dev", "hello", "--web", "--port", "0", "--plugins", "plugins", "--socket", workspace.root + "/control.sock",
            ])
            defer { host.stop() }
            let browser = try await Browser()
            defer { browser.quitNow() }
            try await browser.open(host.url)
            // The first build is cold (the SDK too): a generous deadline, no timing asserted.
            let shown = try await browser.waitForText("\(from) 0 time(s)", timeout: .seconds(900))
            try #require(shown, "the first screen never showed:\n\(host.printed)")
            let text = try String(contentsOfFile: source, encoding: .utf8)
            try text.replacingOccurrences(of: "Text(\"\(from)", with: "Text(\"\(to)").write(toFile: source, atomically: true, encoding: .utf8)
            let edited = try await browser.waitForText("\(to) 0 time(s)", timeout: .seconds(600))
            #expect(edited, "the edited label never showed:\n\(host.printed.suffix(3000))")
            #expect(try await browser.run("return window.berthPage.states;") as? Int == 1, "the page was not reloaded, nor its socket reconnected")
            #expect(try await browser.waitUntil("return [...document.querySelectorAll('#events li')].some(li => li.dataset.kind === 'reloaded');"))
        }
    }
}
