import BerthRuntime
import BerthTerminalUI

extension HostRunner {
    /// `berth run --tui`: the full-screen front end instead of the REPL. Its `:` command
    /// line runs the REPL's commands with the REPL's completion; `quit` or `restart` from
    /// it, or from a socket client, ends it, as do SIGTERM and SIGINT.
    func runTerminalUI(host: BerthHost, shell: HostShell) async -> Int32 {
        // Events are in the front end's inspector; printed, they would land there twice.
        if let eventPrinter { host.removeEventObserver(eventPrinter) }
        eventPrinter = nil
        let completion = HostCompletion(host: host)
        let control = self.control
        let commands = TerminalCommands(run: { line in
            let captured = CapturedOutput()
            let previous = shell.output
            shell.output = captured.sink
            await shell.execute(line)
            shell.output = previous
            return TerminalCommands.Outcome(lines: captured.lines, errors: captured.errors,
                                            quit: control.finished || control.restartRequested)
        }, complete: { before, word in completion.candidates(before: before, word: word) })
        let frontEnd = TerminalFrontEnd(host: host, commands: commands)
        options.buildProblems?.observe { [weak frontEnd] lines in frontEnd?.showProblems(lines) }
        control.setWake { [weak frontEnd] in
            if control.finished || control.restartRequested { frontEnd?.quit() }
        }
        // A `quit` or `restart` from the socket before the front end started: it never
        // takes the terminal over (its `quit` would find no app yet).
        if control.finished || control.restartRequested { return 0 }
        // The front end takes SIGTERM and SIGINT itself, in order with the keys typed before
        // them (a `:send` typed, then SIGTERM: the action starts, then the front end quits).
        do {
            try await frontEnd.run()
        } catch {
            printError("\(error)")
            return ExitStatus.failure.rawValue
        }
        return 0
    }
}
