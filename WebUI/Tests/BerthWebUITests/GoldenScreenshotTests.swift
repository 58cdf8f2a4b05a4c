import Foundation
import Testing

/// The example screens as Chromium draws them, against PNGs kept in Golden/: at most
/// `GoldenScreenshotTests.tolerance` of the pixels may differ by more than 32 in a channel
/// (font hinting and antialiasing move a few). `BERTH_UPDATE_GOLDEN=1` writes them anew.
/// The inspector is hidden (its memory and pid figures change every run).
@Suite("golden screenshots of the page", .serialized)
struct GoldenScreenshotTests {
    static let tolerance = 0.005
    static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Golden").path

    /// The screens: the start list, Counter (its tick stopped: the argument is its interval),
    /// Inbox (title, styles, list, divider, picker) and Inbox's compose modal.
    static var screens: [(name: String, open: [[String: Any]], wait: String)] { [
        ("start", [], "com.example.counter/counter"),
        ("counter", [["op": "open", "route": "com.example.counter/counter", "argument": "100000000"]], "Total: 0"),
        ("inbox", [["op": "open", "route": "com.example.inbox/inbox"]], "File new mail in"),
    ] }

    @Test("the example screens match their golden screenshots", arguments: isolationModes)
    func examples(isolation: String) async throws {
        let page = try await WebSessionFixture(isolation: isolation, width: 1000, height: 640)
        defer { page.close() }
        try await page.browser.click("#toggle-inspector")
        for screen in Self.screens {
            for command in screen.open { try await page.send(command) }
            try await page.expectText(screen.wait)
            // The focus ring and caret are not part of the picture.
            try await page.browser.run("document.activeElement && document.activeElement.blur();")
            try await Task.sleep(for: .milliseconds(300))
            let png = try await page.browser.screenshot()
            try await compare(png, golden: screen.name, browser: page.browser)
        }
        // The modal over its opener.
        try await page.browser.click("[data-focus-key='action:compose']")
        #expect(try await page.browser.waitUntil("return !!document.querySelector('.modal');"))
        try await page.browser.run("document.activeElement && document.activeElement.blur();")
        try await Task.sleep(for: .milliseconds(300))
        try await compare(try await page.browser.screenshot(), golden: "inbox-compose", browser: page.browser)
        // The comparison can fail: two different screens are far outside the tolerance.
        if let start = FileManager.default.contents(atPath: Self.folder + "/start.png"),
           let counter = FileManager.default.contents(atPath: Self.folder + "/counter.png") {
            #expect(try await Self.differingFraction(start, counter, browser: page.browser) > Self.tolerance * 4)
        }
        // The screenshot Docs/web-ui.md shows, with the inspector.
        if isolation == "process" {
            try await page.browser.click("#toggle-inspector")
            _ = try await page.browser.command("POST", "window/rect", ["width": 1440, "height": 820])
            try await Task.sleep(for: .milliseconds(500))
            let docs = URL(fileURLWithPath: Paths.root + "/Docs/images/web-ui.png")
            try? FileManager.default.createDirectory(at: docs.deletingLastPathComponent(), withIntermediateDirectories: true)
            try await page.browser.screenshot().write(to: docs)
        }
    }

    private func compare(_ png: Data, golden name: String, browser: Browser, sourceLocation: SourceLocation = #_sourceLocation) async throws {
        let path = Self.folder + "/\(name).png"
        if ProcessInfo.processInfo.environment["BERTH_UPDATE_GOLDEN"] == "1" {
            try png.write(to: URL(fileURLWithPath: path))
            return
        }
        guard let golden = FileManager.default.contents(atPath: path) else {
            Issue.record("no golden screenshot \(path): run with BERTH_UPDATE_GOLDEN=1 to record it", sourceLocation: sourceLocation)
            return
        }
        let differing = try await Self.differingFraction(png, golden, browser: browser)
        if differing > Self.tolerance {
            let failed = Paths.package + "/.build/golden-failures"
            try? FileManager.default.createDirectory(atPath: failed, withIntermediateDirectories: true)
            try? png.write(to: URL(fileURLWithPath: failed + "/\(name).png"))
            Issue.record("\(name): \(String(format: "%.3f", differing * 100)) % of the pixels differ (tolerance \(Self.tolerance * 100) %); the new one is in \(failed)",
                         sourceLocation: sourceLocation)
        }
    }

    /// The fraction of pixels that differ, decoded and counted by the browser itself (in a
    /// blank tab with no page policy), so the tests need no PNG decoder.
    static func differingFraction(_ first: Data, _ second: Data, browser: Browser) async throws -> Double {
        let handles = try await browser.command("GET", "window/handles") as? [String] ?? []
        let current = try await browser.command("GET", "window") as? String ?? ""
        _ = try await browser.command("POST", "window/new", ["type": "tab"])
        let all = try await browser.command("GET", "window/handles") as? [String] ?? []
        let blank = all.first { !handles.contains($0) } ?? current
        _ = try await browser.command("POST", "window", ["handle": blank])
        let result = try? await browser.runAsync("""
            const done = arguments[arguments.length - 1];
            const load = (b64) => new Promise((ok, fail) => { const i = new Image(); i.onload = () => ok(i); i.onerror = fail; i.src = 'data:image/png;base64,' + b64; });
            Promise.all([load(arguments[0]), load(arguments[1])]).then(([a, b]) => {
              if (a.width !== b.width || a.height !== b.height) { done(1); return; }
              const pixels = (img) => { const c = document.createElement('canvas'); c.width = img.width; c.height = img.height;
                const x = c.getContext('2d'); x.drawImage(img, 0, 0); return x.getImageData(0, 0, img.width, img.height).data; };
              const p = pixels(a), q = pixels(b); let differing = 0;
              for (let i = 0; i < p.length; i += 4) {
                if (Math.abs(p[i] - q[i]) > 32 || Math.abs(p[i + 1] - q[i + 1]) > 32 || Math.abs(p[i + 2] - q[i + 2]) > 32) differing++;
              }
              done(differing / (p.length / 4));
            }, () => done(1));
            """, [first.base64EncodedString(), second.base64EncodedString()])
        _ = try await browser.command("DELETE", "window")
        _ = try await browser.command("POST", "window", ["handle": current])
        return (result as? Double) ?? (result as? Int).map(Double.init) ?? 1
    }
}
