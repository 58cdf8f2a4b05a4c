import ArgumentParser

extension Berth {
    /// `berth restart`: over the control socket of a running host.
    struct Restart: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Re-exec a running host with the same arguments, keeping persisted state and open screens.")

        @OptionGroup var socket: SocketOptions

        func run() throws {
            try RemoteCommand.perform(["restart"], socket: socket)
        }
    }
}
