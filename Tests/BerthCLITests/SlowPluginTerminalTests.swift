import BerthTestSupport
import Foundation
import Testing

/// `berth run --tui`, the real binary in a pseudo-terminal, with the crasher's gate screens:
/// each waits inside its `create`, action or render (it creates `entered-WHEN` in the gate
/// folder, then waits for `leave-WHEN`, which the test creates only after its checks). While
/// it is inside, Counter's keys, its ticks and `status` over the control socket answer, and
/// the opener stays on screen until a slow `create` returns. In whichever mode the run uses
/// (the default, and BERTH_ISOLATION=in-process).
@Suite("A plugin slow in create, an action or a render holds only its own screens (berth run --tui)", .serialized, .blocking)
struct SlowPluginTerminalTests {
    /// The screen as the emulator shows it after everything written so far.
    private func screen(_ terminal: TerminalSession) -> String {
        var emulator = ScreenEmulator(width: 120, height: 40)
        emulator.apply(terminal.output)
        return emulator.text
    }

    private func waitForScreen(_ terminal: TerminalSession, _ text: String, sourceLocation: SourceLocation = #_sourceLocation) -> Bool {
        var emulator = ScreenEmulator(width: 120, height: 40)
        let seen = terminal.waitUntil(timeout: .seconds(90)) { bytes in
            emulator = ScreenEmulator(width: 120, height: 40)
            emulator.apply(bytes)
            return emulator.text.contains(text)
        }
        if !seen { Issue.record("the screen never showed '\(text)':\n\(screen(terminal))", sourceLocation: sourceLocation) }
        return seen
    }

    /// Counter's tick count in its title (`Counter · ticks N`).
    private func ticks(_ terminal: TerminalSession) -> Int? {
        guard let match = screen(terminal).firstMatch(of: /Counter · ticks (\d+)/) else { return nil }
        return Int(match.1)
    }

    /// While the gate screen waits inside `call`: `+` on Counter (the visible screen) steps it
    /// to `count`, Counter ticks at least once more, and `status` answers naming the call.
    private func answeredMeanwhile(_ terminal: TerminalSession, _ host: ControlClient, busy call: String, count: Int,
                                   sourceLocation: SourceLocation = #_sourceLocation) throws {
        try host.waitFor(call, in: ["status"])
        terminal.type("+")
        #expect(waitForScreen(terminal, "Count: [-] \(count) [+]", sourceLocation: sourceLocation), "Counter's key was answered")
        let before = try #require(ticks(terminal), "Counter shows its ticks:\n\(screen(terminal))", sourceLocation: sourceLocation)
        #expect(waitForScreen(terminal, "Counter · ticks \(before + 1)", sourceLocation: sourceLocation), "Counter's task ticked")
        // The call has still not returned (its leave file does not exist yet): all of the
        // above happened while the plugin was inside it.
        #expect(try host.command(["status"]).contains(call), "status names the running call", sourceLocation: sourceLocation)
    }

    /// Opens the crasher's `gate-WHEN` screen over the socket; while the plugin waits inside
    /// WHEN, Counter (the opener) stays on screen and answers (`answeredMeanwhile`); let go,
    /// the open replies with the new screen, which then shows.
    private func openWhileInside(_ when: String, gate: String, _ terminal: TerminalSession, _ host: ControlClient, socket: String,
                                 count: Int, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let open = try ControlConnectionForTests(socket)
        defer { open.close() }
        open.sendFrame(Array(#"{"args":["open","org.berth.crasher/gate-\#(when)","\#(gate)"]}"#.utf8))
        try answeredMeanwhile(terminal, host, busy: "org.berth.crasher/gate-\(when) \(when)", count: count, sourceLocation: sourceLocation)
        #expect(!screen(terminal).contains("gate-\(when)"), "the new screen is not shown before \(when) returns", sourceLocation: sourceLocation)
        if when == "activate" {
            // Created and attached, not pushed: `screens` lists it, as its snapshot shows it.
            let listed = try host.command(["screens"]).split(separator: "\n").first { $0.contains("gate-activate") }
            #expect(listed?.split(separator: " ").last == "opening", "\(listed ?? "not listed")", sourceLocation: sourceLocation)
        }
        #expect(FileManager.default.createFile(atPath: gate + "/leave-\(when)", contents: nil), sourceLocation: sourceLocation)
        #expect(try open.readReply()?.contains("still here") == true, sourceLocation: sourceLocation)
        #expect(waitForScreen(terminal, "org.berth.crasher/gate-\(when)", sourceLocation: sourceLocation), "the new screen shows once it is ready",
                sourceLocation: sourceLocation)
    }

    @Test("while the plugin waits inside an action, a render, an activate and a create, Counter's key and tick and status answer; the opener stays until the new screen is ready")
    func slowCreateActionRender() throws {
        let workspace = PluginWorkspace()
        workspace.stage("counter.json")
        workspace.stageCrasher()
        let gate = workspace.root + "/plugins/org.berth.crasher"
        let socket = workspace.root + "/control.sock"
        let terminal = try TerminalSession(["run", "--tui", "--plugins", "plugins", "--socket", socket, "--state-dir", "state",
                                            "--unresponsive-ms", "600000"], in: workspace.root)
        defer {
            for when in ["create", "activate", "action", "render"] { FileManager.default.createFile(atPath: "\(gate)/leave-\(when)", contents: nil) }
            if terminal.waitForExit(timeout: .milliseconds(1)) == nil { kill(terminal.pid, SIGTERM); _ = terminal.waitForExit() }
        }
        try #require(waitForScreen(terminal, "[ com.example.counter/counter ]"), "\(terminal.diagnosis())")
        let host = try ControlClient(socket)

        // The gate screens under Counter: Counter is visible and takes the keys.
        _ = try host.command(["open", "org.berth.crasher/gate-render", gate])
        _ = try host.command(["open", "org.berth.crasher/gate-action", gate])
        _ = try host.command(["open", "com.example.counter/counter"])
        try #require(waitForScreen(terminal, "Count: [-] 0 [+]"))
        let screens = try host.command(["screens"]).split(separator: "\n")
        let id = { (route: String) in screens.first { $0.contains(route) }.flatMap { $0.split(separator: " ").first { $0.first?.isNumber == true } }.map(String.init) }
        let actionScreen = try #require(id("gate-action"), "\(screens)")
        let renderScreen = try #require(id("gate-render"), "\(screens)")

        // An action: its client waits for the reply.
        let action = try ControlConnectionForTests(socket)
        defer { action.close() }
        action.sendFrame(Array(##"{"args":["send","#\##(actionScreen)","go"]}"##.utf8))
        try answeredMeanwhile(terminal, host, busy: "org.berth.crasher/gate-action action 'go'", count: 1)
        #expect(FileManager.default.createFile(atPath: gate + "/leave-action", contents: nil))
        #expect(try action.readReply() != nil)

        // A render of a screen under Counter, on its lane.
        #expect(FileManager.default.createFile(atPath: gate + "/arm-render", contents: nil))
        let render = try ControlConnectionForTests(socket)
        defer { render.close() }
        render.sendFrame(Array(##"{"args":["screen","#\##(renderScreen)"]}"##.utf8))
        try answeredMeanwhile(terminal, host, busy: "org.berth.crasher/gate-render render", count: 2)
        #expect(FileManager.default.createFile(atPath: gate + "/leave-render", contents: nil))
        let rendered = try render.readReply() ?? ""
        #expect(rendered.contains("still here"), "\(rendered)")

        // An activate: the new screen is created and attached, but Counter, the opener, stays on
        // screen and usable until it is active and rendered; back on it then returns to Counter.
        try openWhileInside("activate", gate: gate, terminal, host, socket: socket, count: 3)
        terminal.type("\u{1B}")
        #expect(waitForScreen(terminal, "Count: [-] 3 [+]"), "back returns to Counter")

        // A create: Counter, the opener, stays on screen and usable until the new screen exists.
        try openWhileInside("create", gate: gate, terminal, host, socket: socket, count: 4)

        terminal.type("\u{03}")
        #expect(terminal.waitForExit() == 0)
    }
}

/// The control socket's client for one test: a connection per command.
private struct ControlClient {
    let socket: String

    init(_ socket: String) throws {
        self.socket = socket
        let ready = eventually(timeout: .seconds(90), every: .milliseconds(20)) { FileManager.default.fileExists(atPath: socket) }
        guard ready else { throw RunningHostError("the host did not open \(socket)") }
    }

    func command(_ args: [String]) throws -> String {
        let connection = try ControlConnectionForTests(socket)
        defer { connection.close() }
        guard let reply = try connection.request(args) else { throw RunningHostError("no reply to \(args)") }
        return reply
    }

    /// Polls `args` until its reply contains `text`, runs of spaces counting as one.
    func waitFor(_ text: String, in args: [String]) throws {
        var last = ""
        let seen = eventually(timeout: .seconds(90), every: .milliseconds(50)) {
            last = (try? command(args)) ?? ""
            return RunningHost.squeezed(last).contains(RunningHost.squeezed(text))
        }
        if !seen { throw RunningHostError("'\(text)' never appeared in \(args); last reply:\n\(last)") }
    }
}
