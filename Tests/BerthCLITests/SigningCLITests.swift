import Foundation
import Testing
import BerthTestSupport

/// Signing as a plugin author and a host operator do it: `berth keygen`, `berth pack --sign`,
/// the key copied into the default trusted-keys folder, and `berth run --require-signature`.
@Suite("berth keygen, pack --sign, run --require-signature", .blocking)
struct SigningCLITests {
    private func run(_ arguments: [String], in workspace: PluginWorkspace, input: String? = nil) throws -> BerthProcess.Output {
        var output = try BerthProcess.run(arguments, in: workspace.root, input: input)
        output.standardOutput = output.standardOutput.replacingOccurrences(of: workspace.root, with: "$ROOT")
        output.standardError = output.standardError.replacingOccurrences(of: workspace.root, with: "$ROOT")
        return output
    }

    @Test("a signed plugin loads under --require-signature; unsigned and tampered ones are refused with one line each")
    func signAndRequire() throws {
        let workspace = PluginWorkspace()
        workspace.stage("counter.json")
        workspace.stage("greeter.json")

        let keygen = try run(["keygen", "--name", "alice", "--out", "keys"], in: workspace)
        #expect(keygen.status == 0, "\(keygen.standardError)")
        #expect(keygen.standardOutput.hasPrefix("wrote keys/alice.private (keep it private) and keys/alice.public\nfingerprint "))
        #expect(keygen.standardOutput.contains("to trust it: copy keys/alice.public into $ROOT/config/berth/trusted-keys/"))
        let again = try run(["keygen", "--name", "alice", "--out", "keys"], in: workspace)
        #expect(again.status == 1)
        #expect(again.standardError == "error: keys/alice.private: already exists; choose another --name or remove it\n")

        // Pack the staged folders: Greeter signed, Counter not.
        let signed = try run(["pack", "plugins/com.example.greeter", "--out", "signed", "--sign", "keys/alice.private"], in: workspace)
        #expect(signed.status == 0, "\(signed.standardError)")
        #expect(signed.standardOutput.contains("signed by alice (key "))
        #expect(FileManager.default.fileExists(atPath: workspace.root + "/signed/com.example.greeter/plugin.sig"))
        let unsigned = try run(["pack", "plugins/com.example.counter", "--out", "signed"], in: workspace)
        #expect(unsigned.status == 0, "\(unsigned.standardError)")

        // Not trusted yet: list names the key as unknown.
        let before = try run(["list", "--plugins", "signed"], in: workspace)
        #expect(before.standardOutput.contains("unknown key "))
        let trusted = workspace.root + "/config/berth/trusted-keys"
        try FileManager.default.createDirectory(atPath: trusted, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: workspace.root + "/keys/alice.public", toPath: trusted + "/alice.public")
        let list = try run(["list", "--plugins", "signed"], in: workspace)
        let rows = list.standardOutput.split(separator: "\n").map { $0.split(separator: " ", omittingEmptySubsequences: true).map(String.init) }
        #expect(rows.first?.last == "SIGNER")
        #expect(rows.first { $0.first == "com.example.greeter" }?.last == "alice")
        #expect(rows.first { $0.first == "com.example.counter" }?.last == "unsigned")

        let validate = try run(["validate", "--static", "--require-signature", "signed/com.example.greeter", "signed/com.example.counter"], in: workspace)
        #expect(validate.status == 1)
        // Notes (a plugin that runs in-process under BERTH_ISOLATION=in-process) are not this test's.
        #expect(validate.standardOutput.split(separator: "\n").map(String.init).filter { !$0.hasPrefix("  note ") } == [
            "signed/com.example.greeter: ok (com.example.greeter, signed by alice)",
            "signed/com.example.counter: signature: unsigned (no plugin.sig), and --require-signature refuses unsigned plugins",
        ])

        let host = try run(["run", "--plugins", "signed", "--require-signature", "--script", "-"], in: workspace,
                           input: "load com.example.greeter\nplugins\n")
        #expect(host.status == 0, "\(host.standardError)")
        #expect(host.standardOutput.contains("  · com.example.greeter: generation 1 loaded"))
        #expect(host.standardOutput.contains("signed/com.example.counter: signature: unsigned (no plugin.sig), and --require-signature refuses unsigned plugins"))

        // One byte of the signed library changed: refused, naming the change.
        let library = workspace.root + "/signed/com.example.greeter/libGreeter.so"
        var bytes = [UInt8](try #require(FileManager.default.contents(atPath: library)))
        let needle = Array("Hello, %s!".utf8)
        let offset = try #require((0...(bytes.count - needle.count)).first { bytes[$0..<$0 + needle.count].elementsEqual(needle) })
        bytes[offset] ^= 0x20
        #expect(FileManager.default.createFile(atPath: library, contents: Data(bytes)))
        let tampered = try run(["run", "--plugins", "signed", "--require-signature", "--script", "-"], in: workspace, input: "load com.example.greeter\n")
        #expect(tampered.status == 1)
        #expect(tampered.standardOutput.contains("signed/com.example.greeter/plugin.sig: signature: the library changed after signing"))
    }
}
