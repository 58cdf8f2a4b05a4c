import ArgumentParser

extension Berth {
    /// `berth reload ID [--keep-state] [--json]`: reload a plugin in a running host.
    struct Reload: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Reload a plugin in a running host: new generation, screens reopened in place, rollback on failure.")

        @OptionGroup var socket: SocketOptions

        @Argument(help: "The plugin id.", completion: ShellCompletion.pluginIDs)
        var plugin: String

        @Flag(name: .customLong("keep-state"), help: "Carry every @State whose identity and type still match into the new generation.")
        var keepState = false

        @Flag(help: "Print the new generation and each phase's time (validate, copy+hash, dlopen, handshake, close old screens, reopen, restore) as JSON.")
        var json = false

        func run() throws {
            try RemoteCommand.perform(["reload", plugin] + (keepState ? ["--keep-state"] : []) + (json ? ["--json"] : []), socket: socket)
        }
    }
}
