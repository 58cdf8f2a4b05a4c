import ArgumentParser

extension Berth {
    /// `berth host COMMAND…`: any host command, in a running host.
    struct Host: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Run any host command in a running host (open, screen, tap, send, scopes …).",
            discussion: "The words after `host` are the command, as typed in `berth run` (try `berth host help`)."
        )

        @OptionGroup var socket: SocketOptions

        @Argument(parsing: .captureForPassthrough, help: "The host command and its arguments.", completion: ShellCompletion.hostCommand)
        var command: [String] = []

        func validate() throws {
            guard !command.isEmpty else { throw ValidationError("give a host command, for example `berth host tree`") }
        }

        func run() throws {
            // The words are passed through untouched, so help is answered here, no host needed.
            if command == ["--help"] || command == ["-h"] {
                emitLine(Self.helpMessage())
                emitLine("\nHOST COMMANDS:\n" + HostShell.help)
                return
            }
            try RemoteCommand.perform(command, socket: socket)
        }
    }
}
