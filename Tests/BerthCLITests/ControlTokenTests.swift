import BerthTestSupport
import Foundation
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Only the user commands the host (Docs/security.md): a client must first send the secret
/// the host wrote beside its socket. A worker runs as the same uid, so the uid check alone
/// let a sandboxed plugin run `status`, `unload` and `quit`.
@Suite("Control socket token", .serialized, .blocking)
struct ControlTokenTests {
    /// A connection that sends `first` (if any) and then a status request, as a process
    /// that cannot read the token would.
    private func reply(at socket: String, first: [UInt8]?) throws -> String? {
        let connection = try ControlConnectionForTests(socket, presentingToken: false)
        defer { connection.close() }
        if let first { connection.sendFrame(first) }
        connection.sendFrame(Array(#"{"args":["status"]}"#.utf8))
        return try connection.readReply()
    }

    @Test("a client without the host's token is refused; with it, it is served")
    func tokenIsRequired() throws {
        let workspace = PluginWorkspace()
        let host = try RunningHost(workspace)
        let tokenFile = host.socket + ".token"
        var info = stat()
        #expect(stat(tokenFile, &info) == 0)
        #expect(info.st_mode & 0o777 == 0o600)
        let refusal = "error: refused: the client did not present this host's control token (\(tokenFile))"
        #expect(try reply(at: host.socket, first: nil) == refusal)
        #expect(try reply(at: host.socket, first: Array(#"{"token":"0000"}"#.utf8)) == refusal)
        #expect(eventually { host.log.contains("  · control socket: refused: the client did not present") }, "the host says so: \(host.log)")
        let token = try String(contentsOfFile: tokenFile, encoding: .utf8)
        let served = try reply(at: host.socket, first: Array(#"{"token":"\#(token)"}"#.utf8)) ?? ""
        #expect(served.contains("loaded: ") && !served.contains("error"), "\(served)")
        let status = try host.command(["status"])
        #expect(status.contains("loaded: ") && !status.contains("error"), "\(status)")
        _ = try host.command(["quit"])
        host.process.waitUntilExit()
        #expect(!FileManager.default.fileExists(atPath: tokenFile), "the token goes with the host")
    }
}
