import Foundation
@_spi(Engine) @testable import BerthRuntime
@testable import BerthTerminalUI
import BerthTestSupport
import Testing

/// Keys, clicks and the host's own changes, through the headless driver.
@Suite("Terminal UI: input and focus") @MainActor
struct InteractionTests {
    @Test("Tab moves focus in render order; Enter on the start screen opens the focused route")
    func openFromStart() async throws {
        let front = try FrontEndHost()
        let terminal = front.terminal
        #expect(terminal.app.rendered?.focusOrder.first == .route("com.example.counter/counter"))
        await terminal.press(.tab)
        #expect(terminal.app.rendered?.focusOrder.firstIndex(of: .route("com.example.greeter/hello")) == 1)
        await terminal.press(.backTab)
        await terminal.press(.enter)
        #expect(front.host.visibleRouter?.route == "counter")
        #expect(terminal.text.contains("Count: [-] 0 [+]"))
    }

    @Test("+ and → step the focused stepper; Enter taps a button; Space flips a toggle")
    func controls() async throws {
        let front = try FrontEndHost(opening: "counter", argument: "3600000")
        let terminal = front.terminal
        // The stepper is first in render order.
        await terminal.press(.character("+"))
        await terminal.press(.right)
        #expect(terminal.text.contains("Count: [-] 2 [+]"))
        await terminal.press(.character("-"))
        #expect(terminal.text.contains("Count: [-] 1 [+]"))
        // Stepper, button, toggle, then the badge's button.
        for _ in 0..<3 { await terminal.press(.tab) }
        await terminal.press(.enter)
        #expect(terminal.text.contains("[ taps: 1 ]"))
        await terminal.press(.up)
        await terminal.press(.character(" "))
        #expect(terminal.text.contains("[x] Details"))
        #expect(terminal.text.contains("Note: ["))
    }

    @Test("typing edits the focused text field at its caret, with backspace and paste")
    func typing() async throws {
        let front = try FrontEndHost(opening: "counter", argument: "3600000")
        let terminal = front.terminal
        #expect(await terminal.click(on: "[ ] Details"))
        #expect(await terminal.click(on: "Note: ["))
        await terminal.type("hallo")
        await terminal.press(.backspace)
        await terminal.press(.backspace)
        await terminal.type("lo")
        await terminal.press(.left)
        await terminal.press(.left)
        await terminal.paste("-")
        #expect(terminal.text.contains("Note: [hal-lo"))
        // The caret is the terminal's cursor, after the pasted character.
        let bytes = terminal.writes.last ?? []
        #expect(String(decoding: bytes, as: UTF8.self).contains("\u{1B}[?25h"))
        // ':' types into a text field instead of opening the command line.
        await terminal.type(":")
        #expect(terminal.text.contains("Note: [hal-:lo"))
    }

    @Test("focus stays on the same view across re-renders no key caused and a reload")
    func focusByIdentity() async throws {
        // Its own task ticks every ten minutes: the ticks below are the test's.
        let front = try FrontEndHost(opening: "counter", argument: "600000")
        let terminal = front.terminal
        await terminal.press(.tab)
        await terminal.press(.tab)
        let focused = try #require(terminal.app.rendered?.focusOrder[2])
        #expect(terminal.frame.styleMask.contains("rrrrrrrrrrr"))
        // Re-renders the front end did not cause (the tick a task posts, sent here through
        // the host) redraw with the focus where it was. The task's own ticking redraw is the
        // pty test's (TerminalUICLITests): waiting here for wall-clock ticks starved when the
        // whole suite shared the main actor on two cores.
        let screen = try #require(front.host.openRouters.last).id
        for _ in 0..<3 { try front.host.sendBlocking(screen: screen, action: "tick", payload: []) }
        #expect(await terminal.waitFor("ticks 3"))
        #expect(focusedTarget(terminal) == focused)
        try front.host.reload("com.example.counter", keepState: true)
        terminal.settle()
        #expect(focusedTarget(terminal) == focused)
        #expect(terminal.text.contains("[ ] Details"))
    }

    @Test("Esc goes back, dismisses a modal, and closes the root to the start screen")
    func escape() async throws {
        let front = try FrontEndHost(opening: "inbox")
        let terminal = front.terminal
        #expect(await terminal.click(on: "< compose >"))
        #expect(terminal.text.contains("✕ Dismiss"))
        await terminal.press(.escape)
        #expect(front.host.visibleRouter?.route == "inbox")
        #expect(await terminal.click(on: "< greet >"))
        #expect(front.host.visibleRouter?.route == "hello")
        #expect(terminal.text.contains("‹ Back"))
        #expect(terminal.text.contains("inbox › hello"))
        await terminal.press(.escape)
        #expect(front.host.visibleRouter?.route == "inbox")
        await terminal.press(.escape)
        #expect(front.host.visibleRouter == nil)
        #expect(terminal.text.contains("Open a screen:"))
    }

    @Test("an action that takes text opens the command line with 'send ACTION '")
    func actionWithText() async throws {
        let front = try FrontEndHost(opening: "inbox")
        let terminal = front.terminal
        #expect(await terminal.click(on: "< compose >"))
        #expect(await terminal.click(on: "< type >"))
        #expect(terminal.text.contains(":send type"))
        await terminal.type("hi there")
        await terminal.press(.enter)
        #expect(await terminal.click(on: "< send >"))
        #expect(front.host.visibleRouter?.route == "inbox")
        #expect(terminal.text.contains("Inbox · 1 message(s)"))
        #expect(terminal.text.contains("hi there"))
    }

    @Test("the command line runs commands, completes words, and Esc closes it")
    func commandLine() async throws {
        let front = try FrontEndHost()
        let terminal = front.terminal
        await terminal.type(":open com.example.in")
        await terminal.press(.tab)
        #expect(terminal.text.contains(":open com.example.inbox/"))
        await terminal.type("inbox")
        await terminal.press(.enter)
        #expect(front.host.visibleRouter?.route == "inbox")
        await terminal.type(":nonsense")
        await terminal.press(.enter)
        #expect(terminal.text.contains("error: unknown command 'nonsense'"))
        await terminal.type(":back")
        await terminal.press(.escape)
        #expect(!terminal.text.contains(":back"))
    }

    @Test("a screen taller than the terminal scrolls to keep the focused view visible")
    func scrolling() async throws {
        let front = try FrontEndHost(opening: "counter", argument: "3600000", width: 60, height: 9)
        let terminal = front.terminal
        #expect(await terminal.click(on: "[ ] Details"))
        #expect(!terminal.text.contains("< report >"))
        // From the toggle (third) back past the first: the last, the report action.
        for _ in 0..<3 { await terminal.press(.backTab) }
        #expect(terminal.text.contains("< report >"))
        #expect(terminal.text.contains("↑ more"))
        // The wheel scrolls freely, away from the focused action.
        for _ in 0..<4 { await terminal.wheel(down: false) }
        #expect(terminal.text.contains("Counter · ticks 0"))
        #expect(!terminal.text.contains("< report >"))
        await terminal.press(.tab)
        #expect(terminal.text.contains("Count: [-] 0 [+]"))
    }

    @Test("a resize redraws the whole frame at the new size")
    func resize() throws {
        let front = try FrontEndHost(opening: "counter", argument: "3600000")
        let terminal = front.terminal
        terminal.resize(width: 50, height: 12)
        #expect(terminal.frame.width == 50)
        #expect(String(decoding: terminal.writes.last ?? [], as: UTF8.self).contains("\u{1B}[2J"))
        #expect(terminal.text.contains("Count: [-] 0 [+]"))
    }

    @Test("nothing changed, nothing written: a redraw of the same frame writes no bytes and lays nothing out")
    func noChangeNoWrite() async throws {
        let front = try FrontEndHost(opening: "counter", argument: "3600000")
        let terminal = front.terminal
        let writes = terminal.writes.count
        let laidOut = terminal.app.schedule.framesLaidOut
        terminal.app.draw()
        terminal.app.draw()
        #expect(terminal.writes.count == writes)
        // Known unchanged without laying the screen out again.
        #expect(terminal.app.schedule.framesLaidOut == laidOut)
        // A change the host reports (a tick sent from outside the front end) is laid out
        // and written; so is a change of the front end's own (focus).
        try front.host.sendBlocking(screen: try #require(front.host.visibleRouter?.id), action: "tick", payload: [])
        // The run loop would be woken: the change's element in `host.changes` asks for a frame.
        // Counted in turns of the main actor, not by the clock: other tests in this process
        // block it for seconds (a hung worker's watchdog), and the element is read on a turn.
        for _ in 0..<1_000 where !terminal.app.schedule.isPending { try await Task.sleep(for: .milliseconds(10)) }
        #expect(terminal.app.schedule.isPending, "the tick's .changed asked for no frame")
        #expect(await terminal.waitFor("ticks 1"))
        #expect(terminal.app.schedule.framesLaidOut > laidOut && terminal.writes.count > writes)
        let (laidOutAfterTick, writesAfterTick) = (terminal.app.schedule.framesLaidOut, terminal.writes.count)
        terminal.app.moveFocus(by: 1)
        terminal.app.draw()
        #expect(terminal.app.schedule.framesLaidOut == laidOutAfterTick + 1 && terminal.writes.count == writesAfterTick + 1)
    }

    @Test("the inspector shows the router tree, the focused view and the plugins")
    func inspector() async throws {
        let front = try FrontEndHost(opening: "counter", argument: "3600000", width: 120, height: 40)
        let terminal = front.terminal
        await terminal.press(.character("+"))
        await terminal.press(.function(2))
        let text = terminal.text
        #expect(text.contains("Inspector"))
        #expect(text.contains("#1 counter"))
        #expect(text.contains("view "))
        #expect(text.contains("@State"))
        #expect(text.contains("com.example.counter loaded g1"))
        // Under each loaded plugin: its load by phase and when it was activated; an
        // isolated plugin's crash budget too.
        #expect(text.contains("load ") && text.contains("(copy+hash ") && text.contains("handshake "), "\(text)")
        #expect(text.contains(" ms after start"))
        let isolated = front.host.plugins["com.example.counter"]?.generation?.isolation == .process
        #expect(text.contains("crashes 0 of 3 in") == isolated, "\(text)")
        try front.host.reload("com.example.counter")
        terminal.settle()
        #expect(terminal.text.contains("last reload: com.example.counter in "))
        // The inspector's column as one text: a phase's figure may wrap to the next line when
        // the figures are long (a loaded machine).
        let inspector = terminal.text.split(separator: "\n")
            .map { ($0.split(separator: "│").last ?? "").trimmingCharacters(in: .whitespaces) }.joined(separator: " ")
        #expect(inspector.contains("validate ") && inspector.contains("reopen "), "the reload's phases: \(terminal.text)")
        // The event log: the reload's event, read from `host.changes`, is its newest line.
        let reloaded = try #require(front.host.events.last { $0.kind == .reloaded })
        #expect(await terminal.waitFor("\(reloaded.sequence). \(reloaded.subject): "), "\(terminal.text)")
        await terminal.press(.function(2))
        #expect(!terminal.text.contains("Inspector"))
    }

    @Test("in a 100-column terminal the inspector shows where each plugin runs: its mode, and an isolated one's worker pid")
    func inspectorNarrow() async throws {
        let front = try FrontEndHost(opening: "counter", argument: "3600000", width: 100, height: 40)
        await front.terminal.press(.function(2))
        let text = front.terminal.text
        let generation = try #require(front.host.plugins["com.example.counter"]?.generation)
        #expect(text.contains("com.example.counter loaded g1\n"), "the plugin's line fits the panel: \(text)")
        if let pid = generation.workerPID {
            #expect(generation.isolation == .process && text.contains("process · pid \(pid) · "), "\(text)")
        } else {
            #expect(generation.isolation == .inProcess && text.contains("    in-process\n"), "\(text)")
        }
    }

    @Test("a crash of an isolated plugin closes its screen and shows a banner; Esc clears it")
    func crashBanner() async throws {
        let front = try FrontEndHost(opening: "org.berth.crasher/segv-action") { $0.stageCrasher(isolation: "process") }
        let terminal = front.terminal
        // The hang budget of the product's default, for the call that hangs.
        try front.host.shortenHangBudget(of: "org.berth.crasher")
        try? front.host.sendBlocking(screen: try #require(front.host.visibleRouter?.id), action: "go", payload: [])
        #expect(await terminal.waitFor("crashed", timeout: .seconds(60)))
        #expect(terminal.text.contains("✖ the worker of org.berth.crasher crashed"))
        #expect(terminal.text.contains("SIGSEGV"), "the signal is named: \(terminal.text)")
        #expect(front.host.visibleRouter == nil)
        await terminal.press(.escape)
        #expect(!terminal.text.contains("✖"))
    }

    @Test("a Swift plugin's trap: the inspector shows the last crash at the plugin's line, its own frames one a line")
    func crashFramesInInspector() async throws {
        let front = try FrontEndHost(width: 160, height: 48) { workspace in workspace.stage("stress.json") { $0["isolation"] = "process" } }
        try front.open("org.berth.stress/trap", argument: "action")
        let terminal = front.terminal
        try? front.host.sendBlocking(screen: try #require(front.host.visibleRouter?.id), action: "remove", payload: [])
        #expect(await terminal.waitFor("crashed", timeout: .seconds(60)))
        await terminal.press(.function(2))
        let text = terminal.text
        #expect(text.contains("last crash: org.berth.stress"), "\(text)")
        #expect(text.contains("in TrapScreen.handle(action:payload:)"), "\(text)")
        #expect(text.contains("TrapScreen.swift:"), "\(text)")
    }

    @Test("the inspector lists each contract with its provider and the plugins that called it")
    func contractsInInspector() async throws {
        let front = try FrontEndHost(width: 160, height: 60) { workspace in
            workspace.stageFixture(folder: "clock", entry: "fixture_entry_clock", id: "org.berth.clock") {
                $0["routes"] = ["clock"]
                $0["capabilities"] = ["services.provide"]
            }
            workspace.stageFixture(folder: "alarm", entry: "fixture_entry_alarm", id: "org.berth.alarm") {
                $0["routes"] = ["alarm"]
                $0["capabilities"] = ["services.consume", "session"]
            }
        }
        try front.open("org.berth.clock/clock")
        try front.open("org.berth.alarm/alarm")
        let alarm = try #require(front.host.visibleRouter?.id)
        await front.terminal.press(.function(2))
        #expect(front.terminal.text.contains("org.berth.Clock (session)"), "\(front.terminal.text)")
        #expect(front.terminal.text.contains("by org.berth.clock#1; not called yet"))
        try await front.host.send(screen: alarm, action: "begin", payload: Array("s".utf8))
        try await front.host.send(screen: alarm, action: "call", payload: Array("next".utf8))
        _ = front.terminal.settle()
        #expect(front.terminal.text.contains("by org.berth.clock#1; called by org.berth.alarm"), "\(front.terminal.text)")
    }

    private func focusedTarget(_ terminal: HeadlessTerminal) -> FocusTarget? {
        // The focused target is the one drawn reversed in the body.
        let frame = terminal.frame
        return terminal.app.rendered?.targets.first { placed in
            placed.row > 1 && placed.row < frame.height - 1 && frame[placed.column, placed.row].style.reverse
        }?.target
    }
}

@Suite("Terminal UI: the demo's flows by keys alone") @MainActor
struct KeyFlowTests {
    @Test("route context round trip: Profile presents the picker, a user is opened and chosen, the flow ends at Profile")
    func routeContextRoundTrip() async throws {
        let front = try FrontEndHost(opening: "profile")
        let terminal = front.terminal
        // Focus starts on the first action, pick; Enter presents the user picker.
        await terminal.press(.enter)
        #expect(front.host.visibleRouter?.route == "users")
        // open takes TEXT: Enter opens the command line with `send open `.
        await terminal.press(.enter)
        await terminal.type("ada")
        await terminal.press(.enter)
        #expect(front.host.visibleRouter?.route == "user-detail")
        #expect(terminal.text.contains("Ada Lovelace (ada)"))
        await terminal.press(.enter)
        #expect(front.host.visibleRouter?.route == "profile")
        #expect(front.host.events.contains { $0.message.contains("UserSelection") && $0.message.contains("screen") })
    }
}

@Suite("Terminal UI: large screens") @MainActor
struct LargeScreenTests {
    @Test("a 1,000-row screen: Enter taps the focused row, Tab walks down with the view following, PgDn scrolls")
    func thousandRows() async throws {
        let front = try FrontEndHost(opening: "org.berth.stress/grid", argument: "1000") { $0.stage("stress.json") }
        let terminal = front.terminal
        #expect(terminal.text.contains("↓ more"))
        let started = ContinuousClock.now
        await terminal.press(.enter)
        let keyToFrame = started.duration(to: .now)
        #expect(terminal.text.contains("[ row 0: 1 ]"))
        for _ in 0..<30 { await terminal.press(.tab) }
        #expect(terminal.text.contains("[ row 30: 0 ]"))
        #expect(!terminal.text.contains("[ row 0: 1 ]"))
        await terminal.press(.pageDown)
        #expect(!terminal.text.contains("[ row 30: 0 ]"))
        // A figure for Docs/terminal-ui.md, not a check (timings are not tested).
        print("1,000-row screen: key press to frame written \(keyToFrame)")
    }
}

@Suite("Terminal UI: a hung plugin") @MainActor
struct HungPluginTests {
    @Test("an isolated plugin that stops answering is ended by the watchdog, and its verdict is the banner")
    func hungVerdict() async throws {
        let front = try FrontEndHost(opening: "org.berth.crasher/hang-action") { $0.stageCrasher(isolation: "process") }
        let terminal = front.terminal
        // The hang budget of the product's default, for the call that hangs.
        try front.host.shortenHangBudget(of: "org.berth.crasher")
        try? front.host.sendBlocking(screen: try #require(front.host.visibleRouter?.id), action: "go", payload: [])
        #expect(await terminal.waitFor("✖ the worker of org.berth.crasher crashed", timeout: .seconds(60)))
        #expect(terminal.text.contains("unresponsive"), "\(terminal.text)")
        #expect(front.host.visibleRouter == nil)
    }
}
