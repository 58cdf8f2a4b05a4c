import ArgumentParser
import Foundation

extension Berth {
    /// `berth load PATH`: load a plugin folder into a running host.
    struct Load: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Load a plugin folder (anywhere on disk) into a running host.")

        @OptionGroup var socket: SocketOptions

        @Argument(help: "The plugin folder (holding plugin.json).", completion: .directory)
        var path: String

        func run() throws {
            // The host has its own working folder: send an absolute path.
            let absolute = path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
            try RemoteCommand.perform(["load", absolute], socket: socket)
        }
    }
}
