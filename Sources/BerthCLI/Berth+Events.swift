import ArgumentParser

extension Berth {
    /// `berth events [--follow]`: a running host's event log.
    struct Events: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Print a running host's event log; --follow keeps printing new events.")

        @OptionGroup var socket: SocketOptions

        @Flag(help: "Keep printing events as they happen, until interrupted.")
        var follow = false

        func run() throws {
            guard follow else {
                try RemoteCommand.perform(["events"], socket: socket)
                return
            }
            do {
                try ControlClient.follow(socket: socket.path) { emitLine($0) }
            } catch {
                printError(error.description)
                throw ExitStatus.failure
            }
        }
    }
}
