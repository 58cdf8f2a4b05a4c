import BerthTestSupport
import Foundation
import Testing

/// `berth run --tui`, the real binary in a pseudo-terminal, its output read by a terminal
/// emulator: what a person at the terminal sees.
@Suite("berth run --tui in a terminal", .blocking)
struct TerminalUICLITests {
    private func start(in workspace: PluginWorkspace) throws -> TerminalSession {
        workspace.stage("counter.json")
        workspace.stage("inbox.json")
        return try TerminalSession(["run", "--tui", "--plugins", "plugins", "--no-socket", "--state-dir", "state"], in: workspace.root)
    }

    /// The screen as the emulator shows it after everything written so far.
    private func screen(_ bytes: [UInt8]) -> ScreenEmulator {
        var emulator = ScreenEmulator(width: 120, height: 40)
        emulator.apply(bytes)
        return emulator
    }

    /// Waits until the emulated screen shows `text`.
    private func waitForScreen(_ terminal: TerminalSession, _ text: String, sourceLocation: SourceLocation = #_sourceLocation) -> Bool {
        let seen = terminal.waitUntil { screen($0).text.contains(text) }
        if !seen { Issue.record("the screen never showed '\(text)':\n\(screen(terminal.output).text)", sourceLocation: sourceLocation) }
        return seen
    }

    @Test("open Counter with Enter, step it, watch its task tick, hot-reload it, quit with the terminal restored")
    func counterRoundTrip() throws {
        let workspace = PluginWorkspace()
        let terminal = try start(in: workspace)
        try #require(waitForScreen(terminal, "[ com.example.counter/counter ]"), "\(terminal.diagnosis())")
        #expect(screen(terminal.output).modes.isSuperset(of: [1049, 1000, 1006, 2004]))
        // The first route is focused: Enter opens it.
        terminal.type("\r")
        try #require(waitForScreen(terminal, "Count: [-] 0 [+]"))
        terminal.type("+")
        #expect(waitForScreen(terminal, "Count: [-] 1 [+]"))
        // The managed task ticks once a second; the frame follows with no key pressed.
        #expect(waitForScreen(terminal, "Counter · ticks 2"))
        // A reload from the command line keeps @State (the count) and shows generation 2.
        terminal.type(":reload com.example.counter --keep-state\r")
        terminal.type("\u{1B}OQ")
        #expect(waitForScreen(terminal, "com.example.counter loaded g2"))
        #expect(screen(terminal.output).text.contains("Count: [-] 1 [+]"))
        terminal.type("\u{03}")
        #expect(terminal.waitForExit() == 0)
        let after = screen(terminal.output)
        #expect(after.modes.isDisjoint(with: [1049, 1000, 1006, 2004]), "modes left on: \(after.modes)")
        #expect(after.cursorVisible)
        let modes = try #require(terminal.localModes)
        #expect(modes & tcflag_t(ECHO) != 0 && modes & tcflag_t(ICANON) != 0, "the terminal's line discipline is back")
    }

    @Test("a resize redraws at the new size; SIGTERM leaves with the terminal restored")
    func resizeAndTerminate() throws {
        let workspace = PluginWorkspace()
        let terminal = try start(in: workspace)
        try #require(waitForScreen(terminal, "[ com.example.inbox/inbox ]"), "\(terminal.diagnosis())")
        terminal.resize(columns: 60, rows: 20)
        // The whole frame is drawn again at 60 columns: the title bar's help no longer fits.
        let mark = terminal.mark
        #expect(terminal.waitUntil { Array($0[mark...]).count > 0 && String(decoding: $0[mark...], as: UTF8.self).contains("\u{1B}[2J") })
        kill(terminal.pid, SIGTERM)
        #expect(terminal.waitForExit() == 0)
        let after = screen(terminal.output)
        #expect(!after.modes.contains(1049))
        let modes = try #require(terminal.localModes)
        #expect(modes & tcflag_t(ECHO) != 0)
    }

    /// A host over the crasher fixture, in the host's process (its faults are the host's).
    /// The Swift runtime's backtracer is told not to wait at the terminal for someone to
    /// look at the crash (its default on a terminal), so the crashed host ends at once.
    private func startCrasher(in workspace: PluginWorkspace) throws -> TerminalSession {
        workspace.stageCrasher(isolation: "in-process")
        return try TerminalSession(["run", "--tui", "--plugins", "plugins", "--no-socket", "--state-dir", "state"], in: workspace.root,
                                   environment: ["SWIFT_BACKTRACE": "interactive=no"])
    }

    private func expectRestored(_ terminal: TerminalSession, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let after = screen(terminal.output)
        #expect(after.modes.isDisjoint(with: [1049, 1000, 1006, 2004]), "modes left on: \(after.modes)", sourceLocation: sourceLocation)
        let modes = try #require(terminal.localModes, sourceLocation: sourceLocation)
        #expect(modes & tcflag_t(ECHO) != 0 && modes & tcflag_t(ICANON) != 0, "the line discipline is back", sourceLocation: sourceLocation)
    }

    @Test("a host that crashes (an in-process plugin's SIGSEGV) leaves the terminal restored")
    func hostCrash() throws {
        let workspace = PluginWorkspace()
        let terminal = try startCrasher(in: workspace)
        try #require(waitForScreen(terminal, "[ org.berth.crasher/ok ]"), "\(terminal.diagnosis())")
        terminal.type(":open org.berth.crasher/segv-action\r")
        #expect(waitForScreen(terminal, "org.berth.crasher/segv-action · screen 1"))
        terminal.type(":send go\r")
        let status = terminal.waitForExit()
        #expect(status == 128 + SIGSEGV, "exit status \(String(describing: status))")
        try expectRestored(terminal)
    }

    @Test("a host whose in-process plugin hangs in an action gets SIGTERM: the terminal is restored, then the call left running is named")
    func stuckHost() throws {
        let workspace = PluginWorkspace()
        let terminal = try startCrasher(in: workspace)
        try #require(waitForScreen(terminal, "[ org.berth.crasher/ok ]"), "\(terminal.diagnosis())")
        terminal.type(":open org.berth.crasher/hang-action\r")
        #expect(waitForScreen(terminal, "org.berth.crasher/hang-action · screen 1"))
        terminal.type(":send go\r")
        // The signal goes once the action runs (its busy mark is up): sent at once, it could
        // reach the front end before the typed command.
        #expect(waitForScreen(terminal, "⧗ busy"))
        kill(terminal.pid, SIGTERM)
        #expect(terminal.waitForExit() == 1)
        try expectRestored(terminal)
        // Written after the restore, on the main screen.
        #expect(terminal.screen.contains("left org.berth.crasher/hang-action action 'go'"), "\(terminal.diagnosis())")
    }
}
