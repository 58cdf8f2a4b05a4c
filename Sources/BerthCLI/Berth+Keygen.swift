import ArgumentParser
import BerthRuntime

extension Berth {
    /// `berth keygen --name NAME --out DIR`: an Ed25519 key pair for signing plugins.
    struct Keygen: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Make an Ed25519 key pair for `berth pack --sign`: DIR/NAME.private (keep it) and DIR/NAME.public (give it to hosts).",
            discussion: "A host trusts a key when NAME.public is in its trusted-keys folder (Docs/signing.md)."
        )

        @Option(help: "The key's name: the signer a host shows.")
        var name: String

        @Option(help: ArgumentHelp("The folder to write both files into.", valueName: "DIR"))
        var out: String

        func validate() throws {
            let allowed = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-")
            guard !name.isEmpty, !name.hasPrefix("."), name.allSatisfy(allowed.contains) else {
                throw ValidationError("--name must be letters, digits, '.', '_' or '-' (it names the key files)")
            }
        }

        func run() throws {
            let key = PluginSigningKey(name: name)
            do {
                let written = try key.write(to: out)
                emitLine("wrote \(written.privateKey) (keep it private) and \(written.publicKey)")
                emitLine("fingerprint \(key.publicKey.fingerprint)")
                emitLine("to trust it: copy \(written.publicKey) into \(SignaturePolicy.defaultTrustedKeysFolder())/")
            } catch {
                printError(error.description)
                throw ExitStatus.failure
            }
        }
    }
}
