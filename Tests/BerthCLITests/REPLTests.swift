import BerthTestSupport
import Foundation
import Testing

/// `berth run` at a terminal, driven through a real pseudo-terminal.
@Suite("berth run at a terminal: the REPL", .blocking)
struct REPLTests {
    private func host(in workspace: PluginWorkspace) throws -> TerminalSession {
        workspace.stage("counter.json")
        let terminal = try TerminalSession(["run", "--plugins", "plugins", "--no-socket", "--state-dir", "state"], in: workspace.root)
        try #require(terminal.waitFor("berth> "), "\(terminal.screen)\n\(terminal.diagnosis())")
        return terminal
    }

    /// Types `open ROUTE` and waits for the screen and the next prompt.
    private func open(_ route: String, in terminal: TerminalSession) {
        let mark = terminal.mark
        terminal.type("open \(route)\r")
        #expect(terminal.waitFor("screen 1: active", since: mark), "\(terminal.text(since: mark))")
        #expect(terminal.waitFor("berth> ", since: mark))
    }

    @Test("Tab completes scr to screen, Up recalls the last command, Ctrl-D leaves with exit 0")
    func editing() throws {
        let workspace = PluginWorkspace()
        let terminal = try host(in: workspace)
        open("counter", in: terminal)

        // `scr` completes to the common prefix of screen and screens: Enter runs `screen`.
        var mark = terminal.mark
        terminal.type("scr\t")
        terminal.type("\r")
        #expect(terminal.waitFor("screen 1 com.example.counter/counter", since: mark), "\(terminal.text(since: mark))")
        #expect(terminal.waitFor("berth> ", since: mark))

        mark = terminal.mark
        terminal.type("\u{1B}[A\r")
        #expect(terminal.waitFor("screen 1 com.example.counter/counter", since: mark), "\(terminal.text(since: mark))")
        #expect(!terminal.text(since: mark).contains("^[[A"))
        #expect(terminal.waitFor("berth> ", since: mark))

        // A second Tab lists the choices: the visible screen's interactive view numbers.
        mark = terminal.mark
        terminal.type("step \t\t")
        #expect(terminal.waitFor("1  2  3  4", since: mark), "\(terminal.text(since: mark))")
        terminal.type("\u{15}")

        terminal.type("\u{04}")
        #expect(terminal.waitForExit() == 0, "\(terminal.screen)")
        let history = try String(contentsOfFile: workspace.root + "/state/berth/history", encoding: .utf8)
        // libedit's format: a header line, then one line per command, spaces as \040.
        let lines = history.split(separator: "\n").map(String.init)
        #expect(lines.contains("open\\040counter") && lines.contains("screen"), "\(history)")
    }

    @Test("Ctrl-C drops the typed line and interrupts a running command; the host keeps running")
    func interrupt() throws {
        let workspace = PluginWorkspace()
        let terminal = try host(in: workspace)
        var mark = terminal.mark
        terminal.type("frobnicate")
        #expect(terminal.waitFor("frobnicate", since: mark))
        terminal.type("\u{03}")
        #expect(terminal.waitFor("\r\nberth> ", since: mark))
        // Typed after the Ctrl-C: on a line of its own (the dropped text is gone).
        terminal.type("help\r")
        #expect(terminal.waitFor("pop-to-root", since: mark), "\(terminal.text(since: mark))")

        mark = terminal.mark
        // The editor reads keys one by one (ICANON off) once it shows the prompt again: the
        // control for the wait below.
        #expect(eventually { terminal.localModes.map { $0 & tcflag_t(ICANON) == 0 } == true }, "line mode never off at the prompt")
        terminal.type("sleep 600000\r")
        #expect(terminal.waitFor("sleep 600000\r\n", since: mark), "\(terminal.text(since: mark))")
        // The echo comes before the editor takes its prompt down and hands the terminal back
        // (ICANON on again): a Ctrl-C typed in that instant clears the prompt's line instead of
        // interrupting the command. Wait for the terminal to be handed back.
        #expect(eventually { terminal.localModes.map { $0 & tcflag_t(ICANON) != 0 } == true }, "the editor kept the terminal")
        terminal.type("\u{03}")
        #expect(terminal.waitFor("interrupted", since: mark), "\(terminal.text(since: mark))")
        #expect(terminal.waitFor("berth> ", since: mark))

        mark = terminal.mark
        terminal.type("status\r")
        #expect(terminal.waitFor("loaded: 1 plugin(s)", since: mark), "\(terminal.text(since: mark))")
        #expect(!terminal.screen.contains("unknown command 'frobnicate'"))
        terminal.type("quit\r")
        #expect(terminal.waitForExit() == 0, "\(terminal.screen)")
    }

    @Test("Tab after send completes the visible screen's declared actions")
    func completesActions() throws {
        let workspace = PluginWorkspace()
        let terminal = try host(in: workspace)
        open("counter", in: terminal)
        let mark = terminal.mark
        terminal.type("send rep\t\r")
        #expect(terminal.waitFor("count 0, ticks", since: mark), "\(terminal.text(since: mark))")
        terminal.type("quit\r")
        #expect(terminal.waitForExit() == 0)
    }

    @Test("an unknown command gets the closest known one")
    func didYouMean() throws {
        let workspace = PluginWorkspace()
        let terminal = try host(in: workspace)
        let mark = terminal.mark
        terminal.type("scren\r")
        #expect(terminal.waitFor("unknown command 'scren' (did you mean 'screen'? try help)", since: mark), "\(terminal.text(since: mark))")
        terminal.type("open countr\r")
        #expect(terminal.waitFor("(did you mean 'counter'?)", since: mark), "\(terminal.text(since: mark))")
        terminal.type("quit\r")
        #expect(terminal.waitForExit() == 0)
    }
}
