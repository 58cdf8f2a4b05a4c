import ArgumentParser

extension Berth {
    /// `berth tree`: over the control socket of a running host.
    struct Tree: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Show a running host's router tree.")

        @OptionGroup var socket: SocketOptions

        func run() throws {
            try RemoteCommand.perform(["tree"], socket: socket)
        }
    }
}
