import Foundation
import Testing

/// The page in a real headless Chromium, driven as a person would: by keys alone and by
/// mouse, in both isolation modes.
@Suite("the web page in Chromium", .serialized)
struct BrowserFlowTests {
    @Test("keys only: open Counter, + twice, toggle, type, back", arguments: isolationModes)
    func counterByKeys(isolation: String) async throws {
        let page = try await WebSessionFixture(isolation: isolation)
        defer { page.close() }
        try await page.expectText("com.example.counter/counter")
        // Focus starts on the start list's heading; the first route follows it.
        try await page.browser.press(Key.tab)
        #expect(try await page.focused().contains("route:com.example.counter/counter"))
        try await page.browser.press(Key.enter)
        try await page.expectText("Total: 0")
        // The new screen's heading has focus: Tab reaches the stepper's first button.
        try await page.browser.press(Key.tab)
        #expect(try await page.focused().contains("Decrease Count"))
        try await page.browser.press("+")
        try await page.browser.press("+")
        #expect(try await page.browser.waitUntil("return document.querySelector('.stepper output').textContent === '2';"))
        // Focus stayed on the stepper across the two re-renders.
        #expect(try await page.focused().contains("Decrease Count"))
        try await page.browser.press(Key.tab, Key.tab, Key.tab)
        let toggle = try await page.focused()
        #expect(toggle.hasPrefix("INPUT"), "the Details toggle: \(toggle)")
        try await page.browser.press(Key.space)
        try await page.expectText("Notes are kept while details stay open.")
        try await page.browser.press(Key.tab)
        try await page.browser.press("h", "e", "l", "l", "o")
        #expect(try await page.browser.waitUntil("const n = window.berthPage.state().screens[0].tree; return JSON.stringify(n).includes('\"text\":\"hello\"');"),
                "the host has the typed note")
        try await page.browser.press(Key.escape)
        try await page.expectText("Open a screen")
        #expect(try await page.browser.run("return window.berthPage.states;") as? Int == 1, "no reconnect, no reload of the page")
    }

    @Test("mouse: open Counter, + twice, toggle, type, back", arguments: isolationModes)
    func counterByMouse(isolation: String) async throws {
        let page = try await WebSessionFixture(isolation: isolation)
        defer { page.close() }
        try await page.browser.click("[data-focus-key='route:com.example.counter/counter']")
        try await page.expectText("Total: 0")
        try await page.browser.click("[aria-label='Increase Count']")
        try await page.browser.click("[aria-label='Increase Count']")
        #expect(try await page.browser.waitUntil("return document.querySelector('.stepper output').textContent === '2';"))
        try await page.browser.click(".toggle input")
        try await page.expectText("Notes are kept while details stay open.")
        try await page.browser.type("typed by mouse", into: "input[aria-label='Note']")
        #expect(try await page.browser.waitUntil("return JSON.stringify(window.berthPage.state().screens[0].tree).includes('typed by mouse');"))
        try await page.browser.click("#back")
        try await page.expectText("Open a screen")
    }

    /// Opens Counter, shows its note and types `text` into it, until the host has it.
    static func typeNote(_ text: String, on page: WebSessionFixture) async throws {
        try await page.browser.click("[data-focus-key='route:com.example.counter/counter']")
        try await page.expectText("Total: 0")
        try await page.browser.click(".toggle input")
        try await page.expectText("Notes are kept while details stay open.")
        try await page.browser.type(text, into: "input[aria-label='Note']")
        #expect(try await page.browser.waitUntil("return JSON.stringify(window.berthPage.state().screens[0].tree).includes('\"text\":\"\(text)\"');"))
    }

    @Test("a note being typed keeps its text and caret when the whole screen is drawn again from a state older than the last key", arguments: isolationModes)
    func typingSurvivesRedraw(isolation: String) async throws {
        let page = try await WebSessionFixture(isolation: isolation)
        defer { page.close() }
        try await Self.typeNote("he", on: page)
        // Keys the host has not seen yet are in the field; then the page reconnects and
        // draws the whole screen from the host's state, which still says "he".
        try await page.browser.run("const f = document.querySelector(\"input[aria-label='Note']\"); f.focus(); f.value = 'hello'; f.setSelectionRange(5, 5);")
        try await page.browser.run("window.berthPage.dropConnection();")
        #expect(try await page.browser.waitUntil("return window.berthPage.states === 2 && window.berthPage.connected;"), "it reconnected")
        let field = try await page.browser.run("const f = document.activeElement; return [f.getAttribute('aria-label'), f.value, f.selectionStart].join('|');") as? String
        #expect(field == "Note|hello|5")
    }

    @Test("a note being typed shows a text the host got from elsewhere (not one the page sent) at once", arguments: isolationModes)
    func hostTextWinsOverTyping(isolation: String) async throws {
        let page = try await WebSessionFixture(isolation: isolation)
        defer { page.close() }
        try await Self.typeNote("he", on: page)
        // Another client types into the same field (the probe's send is not the field's own):
        // the host's text is then one this page never sent.
        try await page.browser.run("""
            const s = window.berthPage.state().screens[0];
            const find = (n) => n.type === 'TextField' ? n : (n.children || []).map(find).find((f) => f) || null;
            const note = find(s.tree.root || s.tree);
            document.querySelector("input[aria-label='Note']").focus();
            window.berthPage.send({ op: 'input', screen: s.id, view: note.id, input: 'type', value: 'xyz' });
            """)
        #expect(try await page.browser.waitUntil("return document.activeElement.getAttribute('aria-label') === 'Note' && document.activeElement.value === 'xyz';"),
                "the focused note shows the host's text")
    }

    @Test("Inbox's compose is a modal over the inbox; its delegate action reaches the inbox live", arguments: isolationModes)
    func inboxModal(isolation: String) async throws {
        let page = try await WebSessionFixture(isolation: isolation)
        defer { page.close() }
        try await page.browser.click("[data-focus-key='route:com.example.inbox/inbox']")
        try await page.expectText("Inbox · 0 message(s)")
        try await page.browser.click("[data-focus-key='action:compose']")
        #expect(try await page.browser.waitUntil("return !!document.querySelector('.modal[role=dialog] [data-focus-key=\"action:send\"]');"))
        // The inbox stays under the modal, out of reach.
        #expect(try await page.browser.run("const b = document.querySelector('.backdrop'); return !!b && b.inert && b.innerText.includes('Inbox');") as? Bool == true)
        #expect(try await page.browser.run("return document.querySelector('#back').textContent;") as? String == "Dismiss")
        try await page.browser.type("hi from the browser", into: ".modal input[type=text]")
        try await page.browser.click(".modal [data-focus-key='action:type']")
        try await page.browser.click(".modal [data-focus-key='action:send']")
        try await page.expectText("Inbox · 1 message(s)")
        #expect(try await page.browser.run("return document.querySelector('.modal') === null;") as? Bool == true)
    }

    @Test("Greeter across plugins: Inbox pushes the C Greeter, a wave comes back to Inbox", arguments: isolationModes)
    func greeterAcrossPlugins(isolation: String) async throws {
        let page = try await WebSessionFixture(isolation: isolation)
        defer { page.close() }
        try await page.browser.click("[data-focus-key='route:com.example.inbox/inbox']")
        try await page.expectText("Inbox · 0 message(s)")
        try await page.browser.click("[data-focus-key='action:greet']")
        try await page.expectText("com.example.greeter/hello")
        try await page.expectText("com.example.inbox/inbox", in: "#path")
        try await page.browser.click("[data-focus-key='action:wave']")
        try await page.browser.click("#back")
        try await page.expectText("Inbox · 1 message(s)")
    }

    @Test("two browsers drive one host; a dropped connection comes back and catches up", arguments: isolationModes)
    func sharedAndReconnecting(isolation: String) async throws {
        let page = try await WebSessionFixture(isolation: isolation)
        defer { page.close() }
        let other = try await Browser()
        defer { other.quitNow() }
        try await other.open(page.host.url)
        #expect(try await other.waitUntil("return !!window.berthPage && window.berthPage.connected;"))
        // What one browser does, the other sees.
        try await page.browser.click("[data-focus-key='route:com.example.counter/counter']")
        #expect(try await other.waitForText("Total: 0", in: "main"))
        try await other.click("[aria-label='Increase Count']")
        #expect(try await page.browser.waitUntil("return document.querySelector('.stepper output').textContent === '1';"))
        // The first page loses its connection; meanwhile the other steps again and ticks go on.
        try await page.browser.run("window.berthPage.dropConnection();")
        try await other.click("[aria-label='Increase Count']")
        #expect(try await other.waitUntil("return document.querySelector('.stepper output').textContent === '2';"))
        #expect(try await page.browser.waitUntil("return window.berthPage.states === 2 && window.berthPage.connected;"), "it reconnected")
        #expect(try await page.browser.waitUntil("return document.querySelector('.stepper output').textContent === '2';"), "and caught up")
        let tick = "return [...document.querySelectorAll('main .text')].map(e => e.textContent).find(t => t.startsWith('Counter · ticks'));"
        let ticks = try await page.browser.run(tick) as? String
        #expect(try await page.browser.waitUntil("return \(Self.quotedCheck(tick)) !== \(Browser.quoted(ticks ?? ""));", timeout: .seconds(10)), "ticks keep coming after the reconnect")
    }

    private static func quotedCheck(_ body: String) -> String {
        "(() => { \(body) })()"
    }

    /// In `in-process` mode a crash takes the host down (Docs/isolation.md), so the second
    /// run keeps the crasher in its worker by its manifest and every other plugin in the
    /// host's process (`--isolation manifest`, their manifests saying `in-process`).
    @Test("a worker's crash is a banner on the page, with no input; Escape takes it away", arguments: ["process", "manifest"])
    func crashBanner(isolation: String) async throws {
        let page = try await WebSessionFixture(isolation: isolation) { workspace in
            if isolation == "manifest" { try workspace.setIsolationOfAll("in-process") }
            try workspace.stageCrasher()
        }
        defer { page.close() }
        try await page.send(["op": "open", "route": "org.berth.crasher/segv-task"])
        try await page.expectText("crashed", in: "#banner", timeout: .seconds(60))
        #expect(try await page.browser.run("return document.getElementById('banner').hidden;") as? Bool == false)
        #expect(try await page.browser.waitUntil("return [...document.querySelectorAll('#events li')].some(li => li.dataset.kind === 'crashed');"))
        try await page.browser.press(Key.escape)
        #expect(try await page.browser.waitUntil("return document.getElementById('banner').hidden;"))
        #expect(try await page.browser.run("return window.berthPage.states;") as? Int == 1)
    }

    @Test("markup in a plugin's text is shown as text", arguments: isolationModes)
    func markupIsText(isolation: String) async throws {
        let markup = "<img src=x onerror=\"window.injected=1\"><b>bold</b>"
        let page = try await WebSessionFixture(isolation: isolation) { workspace in
            var manifest = try Workspace.manifest("counter.json")
            manifest["actions"] = ["counter": [["name": "increment", "summary": markup]]]
            try FileManager.default.removeItem(atPath: workspace.plugins + "/com.example.counter")
            try workspace.stage(manifest: manifest, library: "libCounter.so")
        }
        defer { page.close() }
        try await page.browser.click("[data-focus-key='route:com.example.counter/counter']")
        try await page.expectText("Total: 0")
        try await page.expectText(markup)
        try await page.browser.click(".toggle input")
        try await page.expectText("Notes are kept while details stay open.")
        try await page.browser.type(markup, into: "input[aria-label='Note']")
        #expect(try await page.browser.waitUntil("return JSON.stringify(window.berthPage.state().screens[0].tree).includes('window.injected');"))
        // A re-render that rebuilds the field from the plugin's tree (focus elsewhere).
        try await page.browser.click("[aria-label='Increase Count']")
        #expect(try await page.browser.waitUntil("return document.querySelector('input[aria-label=Note]').value.includes('<b>bold</b>');"))
        #expect(try await page.browser.run("return document.querySelectorAll('main img, main b').length;") as? Int == 0)
        #expect(try await page.browser.run("return window.injected === undefined;") as? Bool == true)
    }
}
