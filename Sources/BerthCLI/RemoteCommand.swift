import ArgumentParser
import Foundation

/// `--socket PATH`: which running host to talk to.
struct SocketOptions: ParsableArguments {
    @Option(help: ArgumentHelp("The host's control socket (default: $XDG_RUNTIME_DIR/berth/control.sock, else /tmp/berth-UID/control.sock).", valueName: "PATH"))
    var socket: String?

    var path: String { socket ?? ControlProtocol.defaultSocketPath() }
}

/// Sends a host command to a running host and prints its reply: output on stdout, errors
/// on stderr, exit 1 when the host reports an error.
enum RemoteCommand {
    static func perform(_ args: [String], socket: SocketOptions) throws {
        let reply: ControlReply
        do {
            reply = try ControlClient.request(args, socket: socket.path)
        } catch {
            printError(error.description)
            throw ExitStatus.failure
        }
        for line in reply.output { emitLine(line) }
        for error in reply.errors { printError(error) }
        if !reply.ok { throw ExitStatus.failure }
    }
}
