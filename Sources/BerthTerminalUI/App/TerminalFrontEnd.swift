public import BerthRuntime
import Foundation

/// Runs the front end on the process's terminal until the person quits, a command quits,
/// or SIGTERM/SIGINT/SIGHUP arrives; the terminal is restored whichever way it ends.
///
///     let host = try BerthHost(configuration: …)
///     host.discover()
///     _ = host.activateDiscovered()
///     try await TerminalFrontEnd(host: host).run()
@MainActor
public final class TerminalFrontEnd {
    /// How the front end runs.
    public struct Options: Sendable {
        /// Turn stdout and stderr into a pipe shown in the inspector while the front end runs
        /// (plugin logs and prints would otherwise scribble over the frame).
        public var captureOutput = true
        /// Colour on (it is off with `NO_COLOR` set, whatever this says).
        public var colours = true
        /// A route to open first when nothing is open.
        public var initialRoute: Route?
        /// The defaults.
        public init() {}
    }

    /// The host whose screens are shown.
    public let host: BerthHost
    /// How it runs.
    public var options: Options
    /// What the `:` line runs (nil: `TerminalCommands.basic`).
    public var commands: TerminalCommands?
    /// Called once the terminal is restored, with the front end's captured output lines.
    public var onFinish: (@MainActor ([String]) -> Void)?

    /// The front end while it runs.
    public private(set) var app: TerminalApp?
    /// The problems panel's lines (`showProblems`), kept for a front end not running yet.
    private var problems: [String]?

    /// A front end for `host`; `run()` starts it.
    public init(host: BerthHost, options: Options = Options(), commands: TerminalCommands? = nil) {
        self.host = host
        self.options = options
        self.commands = commands
    }

    /// Shows a failed build's problems in a panel above the status line, the heading
    /// first, until called with nil (`TerminalApp.showProblems`).
    public func showProblems(_ lines: [String]?) {
        problems = lines
        app?.showProblems(lines)
    }

    /// Leaves at the next turn (for a quit that comes from elsewhere: a socket client).
    public func quit() {
        app?.quit()
    }

    /// Takes over the terminal; returns when the front end has finished and the terminal is
    /// back as it was. Throws when stdin or stdout is not a terminal.
    public func run() async throws {
        let device = try TerminalDevice(captureOutput: options.captureOutput)
        let colours = options.colours && ProcessInfo.processInfo.environment["NO_COLOR"] == nil
        let app = TerminalApp(host: host, screen: device, commands: commands, colours: colours)
        self.app = app
        app.showProblems(problems)
        var captured: [String] = []
        defer {
            self.app = nil
            app.detach()
            device.restore()
            onFinish?(captured)
        }
        if let route = options.initialRoute, host.visibleScreen == nil {
            // Its plugin's `create` runs on its lane; the first frame shows the screen.
            do {
                try await host.openScreen(route)
            } catch {
                app.showMessage("\(error)")
            }
        }
        let arrivals = device.arrivals
        app.wake = { [weak device] in device?.wakeUp() }
        app.draw()
        for await arrival in arrivals {
            switch arrival {
            case .input(let events):
                for event in events { await app.handle(event) }
            case .resized:
                app.invalidate()
            case .terminate:
                app.quit()
            case .output(let line):
                captured.append(line)
                app.appendLog(line)
                app.showMessage(line)
            case .wake:
                break
            }
            if app.finished { break }
            if app.redrawPending { app.draw() }
        }
    }
}

extension TerminalFrontEnd {
    /// Puts the terminal back from any thread, without the main actor: for a process about
    /// to `_exit` while its main actor is stuck (async-signal-safe; a no-op when no front
    /// end runs).
    public nonisolated static func restoreTerminalNow() {
        EmergencyRestore.restoreNow()
    }
}

extension TerminalDevice {
    /// Wakes the loop (a host change wants a frame).
    func wakeUp() {
        wakeFeed()
    }
}
