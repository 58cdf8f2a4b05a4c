import ArgumentParser

extension Berth {
    /// `berth status`: over the control socket of a running host.
    struct Status: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Show a running host's plugins, screens and retired images.")

        @OptionGroup var socket: SocketOptions

        func run() throws {
            try RemoteCommand.perform(["status"], socket: socket)
        }
    }
}
