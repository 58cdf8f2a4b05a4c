import Foundation
import Testing

/// A host serving the staged example plugins and a browser showing its page, connected.
final class WebSessionFixture: @unchecked Sendable {
    let workspace: Workspace
    let host: WebHost
    let browser: Browser

    /// Stages the examples (and what `stage` adds), starts `berth-web run --web` in
    /// `isolation`, and opens its URL in headless Chromium.
    init(isolation: String, width: Int = 1280, height: Int = 800, arguments: [String] = [], stage: (Workspace) throws -> Void = { _ in }) async throws {
        workspace = try Workspace()
        try workspace.stageExamples()
        try stage(workspace)
        host = try WebHost(workspace: workspace, isolation: isolation, arguments: arguments)
        browser = try await Browser(width: width, height: height)
        try await browser.open(host.url)
        let connected = try await browser.waitUntil("return !!window.berthPage && window.berthPage.connected && window.berthPage.states > 0;")
        try #require(connected, "the page did not connect to \(host.url):\n\(host.printed)")
    }

    /// Waits for the page to show `text`, failing with what it shows.
    func expectText(_ text: String, in selector: String = "main", timeout: Duration = .seconds(30), sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let shown = try await browser.waitForText(text, in: selector, timeout: timeout)
        if !shown {
            let page = try await browser.run("return document.body.innerText;") as? String ?? ""
            Issue.record("the page never showed '\(text)' in \(selector):\n\(page)\n--- host:\n\(host.printed.suffix(2000))", sourceLocation: sourceLocation)
        }
    }

    /// Sends a command as the page's own controls do (`open` with an argument, which the
    /// start list does not offer).
    func send(_ command: [String: Any]) async throws {
        try await browser.run("window.berthPage.send(arguments[0]);", [command])
    }

    /// The view node of the visible screen with this type and label or text.
    func node(type: String, containing text: String) async throws -> [String: Any]? {
        try await browser.run("""
            const screens = window.berthPage.state().screens; const visible = screens[screens.length - 1];
            const find = (n) => { if (!n) return null; if (n.type === arguments[0] && ((n.fields.label || '') + (n.fields.text || '')).includes(arguments[1])) return n;
              for (const c of n.children) { const hit = find(c); if (hit) return hit; } return null; };
            return visible ? find(visible.tree) : null;
            """, [type, text]) as? [String: Any]
    }

    /// The element with keyboard focus: its tag, label and focus key.
    func focused() async throws -> String {
        try await browser.run("const e = document.activeElement; return `${e.tagName} ${e.getAttribute('aria-label') || e.textContent} ${e.dataset.focusKey || ''}`;") as? String ?? ""
    }

    /// Ends the browser and the host (synchronous, for `defer`).
    func close() {
        browser.quitNow()
        host.stop()
    }
}

/// The isolation modes every flow runs in.
let isolationModes = ["process", "in-process"]
