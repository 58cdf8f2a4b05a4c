import Foundation
import Testing
@_spi(Engine) @testable import BerthRuntime
import BerthTestSupport

/// Signed plugins (Docs/signing.md): real key pairs made in the test, real built libraries
/// signed as `berth pack --sign` signs them, a host that requires signatures.
@Suite("Plugin signatures") @MainActor
struct SignatureTests {
    /// A workspace with Counter and Greeter, a trusted-keys folder holding `trusted.public`,
    /// and the private keys to sign with.
    final class Setup {
        let workspace = PluginWorkspace()
        let trustFolder: String
        let keysFolder: String
        let trusted = PluginSigningKey(name: "trusted")
        let stranger = PluginSigningKey(name: "stranger")
        let counter: String
        let greeter: String

        init() throws {
            trustFolder = (workspace.root as NSString).appendingPathComponent("trusted-keys")
            keysFolder = (workspace.root as NSString).appendingPathComponent("keys")
            _ = try trusted.write(to: keysFolder)
            _ = try stranger.write(to: keysFolder)
            try FileManager.default.createDirectory(atPath: trustFolder, withIntermediateDirectories: true)
            try FileManager.default.copyItem(atPath: keysFolder + "/trusted.public", toPath: trustFolder + "/trusted.public")
            counter = workspace.stage("counter.json")
            greeter = workspace.stage("greeter.json")
        }

        var required: SignaturePolicy { SignaturePolicy(trustedKeysFolder: trustFolder, requireSignature: true) }

        /// Signs the plugin in `folder` with `key`, as `berth pack --sign` does.
        func sign(_ folder: String, with key: PluginSigningKey) throws {
            try PluginValidator.validate(path: folder).get().writeSignature(with: key)
        }

        /// The rejected folder's error lines, by folder name.
        func refusals(_ result: DiscoveryResult) -> [String: [PluginProblem]] {
            Dictionary(uniqueKeysWithValues: result.rejected.map { (($0.folder as NSString).lastPathComponent, $0.problems.filter { $0.severity == .error }) })
        }
    }

    /// Changes one byte of `file` inside the first occurrence of `text` (a real edit of code's data).
    static func flipByte(in file: String, inside text: String) throws {
        var bytes = [UInt8](try #require(FileManager.default.contents(atPath: file)))
        let needle = Array(text.utf8)
        let start = try #require((0...(bytes.count - needle.count)).first { bytes[$0..<$0 + needle.count].elementsEqual(needle) })
        bytes[start + 1] ^= 0x20
        #expect(FileManager.default.createFile(atPath: file, contents: Data(bytes)))
    }

    @Test("plugins signed by a trusted key load under --require-signature, and name their signer")
    func signedLoads() throws {
        let setup = try Setup()
        try setup.sign(setup.counter, with: setup.trusted)
        try setup.sign(setup.greeter, with: setup.trusted)
        let host = try setup.workspace.makeHost(signatures: setup.required)
        #expect(host.rejected.isEmpty)
        #expect(host.plugins["com.example.greeter"]?.source.signature == .trusted(setup.trusted.publicKey))
        #expect(host.plugins["com.example.greeter"]?.source.signature.description == "trusted")
        #expect(host.loadAll().isEmpty)
        #expect(host.generation(of: "com.example.counter") != nil)
        #expect(host.generation(of: "com.example.greeter") != nil)
        host.shutdown()
    }

    @Test("unsigned, unknown-key, revoked-key and tampered plugins are each refused with one line; the signed one loads")
    func refusals() throws {
        let setup = try Setup()
        let workspace = setup.workspace
        try setup.sign(setup.counter, with: setup.trusted)
        // Greeter copies under other ids, one per way to fail.
        let unsigned = workspace.stage("greeter.json", as: "unsigned") { $0["id"] = "com.test.unsigned" }
        let unknown = workspace.stage("greeter.json", as: "unknown") { $0["id"] = "com.test.unknown" }
        try setup.sign(unknown, with: setup.stranger)
        let library = workspace.stage("greeter.json", as: "library") { $0["id"] = "com.test.library" }
        try setup.sign(library, with: setup.trusted)
        try Self.flipByte(in: library + "/libGreeter.so", inside: "Hello, %s!")
        let manifest = workspace.stage("greeter.json", as: "manifest") { $0["id"] = "com.test.manifest" }
        try setup.sign(manifest, with: setup.trusted)
        workspace.write(manifest: ["id": "com.test.manifest", "name": "Greeter", "version": "1.2.0", "abi": "1.0",
                                   "library": "libGreeter.so", "entry": "berth_greeter_entry_v1", "runtime": "c", "routes": ["hello", "admin"]],
                        in: manifest)
        try FileManager.default.removeItem(atPath: setup.greeter)

        let result = PluginDiscovery.scan([workspace.plugins], signatures: setup.required)
        #expect(result.plugins.map(\.manifest.id) == ["com.example.counter"])
        let refusals = setup.refusals(result)
        #expect(refusals.count == 4)
        for (folder, problems) in refusals {
            #expect(problems.count == 1, "\(folder): \(problems)")
            #expect(problems.first?.field == "signature")
        }
        #expect(refusals["unsigned"]?.first?.message.contains("unsigned (no plugin.sig)") == true)
        #expect(refusals["unsigned"]?.first?.path == unsigned)
        #expect(refusals["unknown"]?.first?.message.contains("signed by 'stranger'") == true)
        #expect(refusals["unknown"]?.first?.message.contains("not a trusted key in \(setup.trustFolder)") == true)
        #expect(refusals["library"]?.first?.message.hasPrefix("the library changed after signing") == true)
        #expect(refusals["manifest"]?.first?.message == "plugin.json changed after signing")

        // Revoking the trusted key refuses Counter too, though trusted.public is still there.
        let revocations = "# compromised 2026-11-23\n\(setup.trusted.publicKey.fingerprint)\n"
        #expect(FileManager.default.createFile(atPath: setup.trustFolder + "/revoked-keys", contents: Data(revocations.utf8)))
        let revoked = PluginDiscovery.scan([workspace.plugins], signatures: setup.required)
        #expect(revoked.plugins.isEmpty)
        let counterRefusal = try #require(setup.refusals(revoked)["com.example.counter"])
        #expect(counterRefusal.map(\.message) == ["signed with key \(setup.trusted.publicKey.shortFingerprint) ('trusted'), which is revoked in \(setup.trustFolder)/revoked-keys"])
    }

    @Test("without --require-signature, unsigned and unknown-key plugins load and say who signed them; a tampered one is still refused")
    func withoutRequirement() throws {
        let setup = try Setup()
        try setup.sign(setup.counter, with: setup.stranger)
        let tampered = setup.workspace.stage("greeter.json", as: "tampered") { $0["id"] = "com.test.tampered" }
        try setup.sign(tampered, with: setup.trusted)
        try Self.flipByte(in: tampered + "/libGreeter.so", inside: "Hello, %s!")

        let result = PluginDiscovery.scan([setup.workspace.plugins], signatures: SignaturePolicy(trustedKeysFolder: setup.trustFolder))
        let byID = Dictionary(uniqueKeysWithValues: result.plugins.map { ($0.manifest.id, $0.signature) })
        #expect(byID["com.example.greeter"] == .unsigned)
        #expect(byID["com.example.counter"] == .unknownKey(setup.stranger.publicKey))
        #expect(byID["com.example.counter"]?.description.hasPrefix("unknown key \(setup.stranger.publicKey.shortFingerprint)") == true)
        #expect(setup.refusals(result)["tampered"]?.map(\.field) == ["signature"])
    }

    @Test("a signature file edited by hand does not verify")
    func editedSignature() throws {
        let setup = try Setup()
        try setup.sign(setup.greeter, with: setup.trusted)
        // Swap in the trusted key's signature of other bytes: the digests still match.
        let path = setup.greeter + "/plugin.sig"
        var object = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path))) as? [String: Any])
        try setup.sign(setup.counter, with: setup.trusted)
        let other = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: setup.counter + "/plugin.sig"))) as? [String: Any])
        object["signature"] = other["signature"]
        try JSONSerialization.data(withJSONObject: object).write(to: URL(fileURLWithPath: path))

        let result = PluginDiscovery.scan([setup.workspace.plugins], signatures: setup.required)
        #expect(setup.refusals(result)["com.example.greeter"]?.map(\.description) == [
            "\(path): signature: the signature does not verify with the key it names (plugin.sig was altered)",
        ])
    }

    @Test("reload verifies the new generation: a library swapped after signing is refused and the old generation stays")
    func reloadVerifies() throws {
        let setup = try Setup()
        try setup.sign(setup.greeter, with: setup.trusted)
        try FileManager.default.removeItem(atPath: setup.counter)
        let host = try setup.workspace.makeHost(signatures: setup.required)
        let first = try host.load("com.example.greeter")
        try Self.flipByte(in: setup.greeter + "/libGreeter.so", inside: "Hello, %s!")
        #expect(throws: LoaderError.self) { try host.reload("com.example.greeter") }
        do {
            try host.reload("com.example.greeter")
        } catch {
            #expect(error.message.contains("signature: the library changed after signing"))
        }
        #expect(host.generation(of: "com.example.greeter")?.number == first.number)

        // Signed again (a new release, packed afresh), it reloads.
        try FileManager.default.removeItem(atPath: setup.greeter + "/plugin.sig")
        try setup.sign(setup.greeter, with: setup.trusted)
        let second = try host.reload("com.example.greeter")
        #expect(second.number > first.number)
        host.shutdown()
    }

    @Test("a plugin folder loaded by path is verified too")
    func loadFolderVerifies() throws {
        let setup = try Setup()
        try FileManager.default.removeItem(atPath: setup.counter)
        try FileManager.default.removeItem(atPath: setup.greeter)
        let host = try setup.workspace.makeHost(signatures: setup.required)
        let outside = (setup.workspace.root as NSString).appendingPathComponent("elsewhere")
        try FileManager.default.createDirectory(atPath: outside, withIntermediateDirectories: true)
        let folder = outside + "/greeter"
        try FileManager.default.copyItem(atPath: BuildProducts.manifest("greeter.json"), toPath: outside + "/greeter.json")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: BuildProducts.library("libGreeter.so"), toPath: folder + "/libGreeter.so")
        try FileManager.default.moveItem(atPath: outside + "/greeter.json", toPath: folder + "/plugin.json")
        do {
            try host.loadFolder(folder)
            Issue.record("an unsigned folder loaded under --require-signature")
        } catch {
            #expect(error.message.contains("signature: unsigned"))
        }
        try setup.sign(folder, with: setup.trusted)
        #expect(try host.loadFolder(folder).pluginID == "com.example.greeter")
        host.shutdown()
    }

    @Test("key files round-trip, and a malformed trusted key or revocation line is a warning naming its file")
    func keyFiles() throws {
        let setup = try Setup()
        let reread = try PluginSigningKey(contentsOf: setup.keysFolder + "/trusted.private")
        #expect(reread.publicKey == setup.trusted.publicKey)
        let attributes = try FileManager.default.attributesOfItem(atPath: setup.keysFolder + "/trusted.private")
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
        #expect(throws: SigningKeyError.self) { _ = try setup.trusted.write(to: setup.keysFolder) }

        #expect(FileManager.default.createFile(atPath: setup.trustFolder + "/broken.public", contents: Data("berth-ed25519-public !!\n".utf8)))
        #expect(FileManager.default.createFile(atPath: setup.trustFolder + "/revoked-keys", contents: Data("not-a-fingerprint\n".utf8)))
        let trust = TrustedKeys(folder: setup.trustFolder)
        #expect(trust.problems.map(\.path) == [setup.trustFolder + "/broken.public", setup.trustFolder + "/revoked-keys"])
        #expect(trust.problems.allSatisfy { $0.severity == .warning })
        #expect(trust.status(of: setup.trusted.publicKey) == .trusted(setup.trusted.publicKey))
    }
}
