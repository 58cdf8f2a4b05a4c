import ArgumentParser

extension Berth {
    /// `berth unload ID`: unload a plugin from a running host.
    struct Unload: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Unload a plugin from a running host (its screens closed first).")

        @OptionGroup var socket: SocketOptions

        @Argument(help: "The plugin id.", completion: ShellCompletion.pluginIDs)
        var plugin: String

        func run() throws {
            try RemoteCommand.perform(["unload", plugin], socket: socket)
        }
    }
}
