@_spi(Engine) import BerthRuntime
import Foundation
import ServiceLifecycle

extension HostRunner {
    /// `berth run` without a full-screen front end: the line editor at a terminal, else
    /// lines from a script or stdin, each run as a host command. Returns when the input ends
    /// (unless the host outlives it), on `quit` or `restart`, or on graceful shutdown;
    /// the status is 1 when a command of a script failed.
    func runREPL(host: BerthHost, shell: HostShell, lines: LineSource?, interactive: Bool, serving: Bool) async -> Int32 {
        // One stream for everything the loop acts on: lines (read on their own thread),
        // and wake-ups (quit or restart from any shell, graceful shutdown).
        let (inputs, feed) = AsyncStream.makeStream(of: LoopInput.self)
        var session: InteractiveSession?
        if let lines {
            let reader = Thread {
                while let line = lines.next() { feed.yield(.line(line)) }
                lines.close()
                feed.yield(.endOfInput)
            }
            reader.name = "berth.lines"
            reader.start()
        } else {
            session = InteractiveSession(host: host, feed: feed)
        }
        defer { session?.finish() }
        control.setWake { feed.yield(.wake) }
        // A watching host, or one serving a socket it was asked for, outlives its input
        // (stdin at its end: a daemon). Piped commands end with their input.
        let outlivesInput = options.script == nil && (options.watch || (serving && options.socket != nil))
        let leaving = { [control] in control.finished || control.restartRequested || Task.isShuttingDownGracefully }
        await withGracefulShutdownHandler {
            if let session { session.start() } else if interactive { FileHandleOutput.standardOutput("berth> ") }
            loop: for await input in inputs {
                switch input {
                case .line(let line):
                    let trimmed = line.trimmingCharacters(in: .whitespaces)
                    if !interactive, !trimmed.isEmpty, !trimmed.hasPrefix("#") { emitLine("> \(TerminalText.visible(trimmed))") }
                    commandsRunning += 1
                    defer { commandsRunning -= 1 }
                    if let session {
                        await session.run({ await shell.execute(line) }, prompt: { !leaving() })
                    } else {
                        await shell.execute(line)
                        if interactive && !control.finished { FileHandleOutput.standardOutput("berth> ") }
                    }
                case .endOfInput:
                    // Ctrl-D at the editor always leaves; a daemon outlives its input.
                    if session != nil || !outlivesInput { break loop }
                case .wake:
                    break
                }
                if leaving() { break }
            }
        } onGracefulShutdown: {
            feed.yield(.wake)
        }
        return shell.failures > 0 && !interactive ? ExitStatus.failure.rawValue : 0
    }
}
