@_spi(Engine) import BerthCore
import Foundation

/// The detached signature `berth pack --sign` writes into a packed plugin folder
/// (`plugin.sig`, JSON). It signs the SHA-256 of the manifest's exact bytes and the
/// library's SHA-256, so neither file can change after signing without the check failing.
struct PluginSignature: Codable, Sendable {
    static let fileName = "plugin.sig"
    static let currentFormat = "berth-signature-v1"

    var format: String
    /// The signing key's name (advisory: a trusted key's own file name wins).
    var signer: String
    /// The package key, base64 of its 32 raw bytes.
    var key: String
    var manifestSHA256: String
    var librarySHA256: String
    /// Base64 of the Ed25519 signature of `message`.
    var signature: String

    enum CodingKeys: String, CodingKey {
        case format, signer, key, signature
        case manifestSHA256 = "manifest-sha256"
        case librarySHA256 = "library-sha256"
    }

    /// The bytes that are signed: the format tag and both digests, one per line.
    static func message(manifestSHA256: String, librarySHA256: String) -> [UInt8] {
        Array("\(currentFormat)\nmanifest-sha256 \(manifestSHA256)\nlibrary-sha256 \(librarySHA256)\n".utf8)
    }

    /// Signs a validated plugin's manifest bytes and library with `key`.
    init(signing plugin: ValidatedPlugin, with key: PluginSigningKey) throws(SigningKeyError) {
        let message = Self.message(manifestSHA256: plugin.manifestSHA256, librarySHA256: plugin.librarySHA256)
        format = Self.currentFormat
        signer = key.name
        self.key = key.publicKey.base64
        manifestSHA256 = plugin.manifestSHA256
        librarySHA256 = plugin.librarySHA256
        signature = Data(try key.signature(for: message)).base64EncodedString()
    }

    /// The signature file in `folder`, nil when there is none.
    static func read(in folder: RawFile.Folder) throws(SignatureFault) -> PluginSignature? {
        // One open: a missing file is the common case (an unsigned plugin), told by ENOENT.
        guard let data = folder.contents(fileName, limit: 64 * 1024) else {
            if errno == ENOENT { return nil }
            throw .unreadable("cannot read it: \(RawFile.failure)")
        }
        guard let decoded = try? JSONDecoder().decode(PluginSignature.self, from: data) else {
            throw .unreadable("expected a JSON object with format, signer, key, manifest-sha256, library-sha256 and signature")
        }
        guard decoded.format == currentFormat else {
            throw .unreadable("format '\(decoded.format.prefix(40))' is not \(currentFormat)")
        }
        return decoded
    }

    /// Writes `plugin.sig` into `folder`.
    func write(in folder: String) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        try encoder.encode(self).write(to: URL(fileURLWithPath: (folder as NSString).appendingPathComponent(Self.fileName)))
    }

    /// Checks this signature against the files as they are now; returns the key that made it.
    func verify(manifestSHA256 actualManifest: String, librarySHA256 actualLibrary: String) throws(SignatureFault) -> PluginPublicKey {
        guard let rawKey = Data(base64Encoded: key), rawKey.count == 32 else { throw .unreadable("key is not a base64 Ed25519 package key") }
        guard let rawSignature = Data(base64Encoded: signature) else { throw .unreadable("signature is not base64") }
        let publicKey = PluginPublicKey(name: signer, rawKey: [UInt8](rawKey))
        let manifestChanged = actualManifest != manifestSHA256
        let libraryChanged = actualLibrary != librarySHA256
        switch (manifestChanged, libraryChanged) {
        case (true, true): throw .bothChanged
        case (true, false): throw .manifestChanged
        case (false, true): throw .libraryChanged(signed: librarySHA256, now: actualLibrary)
        case (false, false): break
        }
        let message = Self.message(manifestSHA256: actualManifest, librarySHA256: actualLibrary)
        guard publicKey.verifies([UInt8](rawSignature), of: message) else { throw .badSignature }
        return publicKey
    }
}

/// Why a present signature does not hold. Always an error, with or without
/// `--require-signature`: the files are not the ones that were signed.
package enum SignatureFault: Error, Sendable, Equatable, CustomStringConvertible {
    /// `plugin.sig` cannot be read or parsed.
    case unreadable(String)
    /// `plugin.json` changed after signing.
    case manifestChanged
    /// The library changed after signing (its SHA-256 then and now).
    case libraryChanged(signed: String, now: String)
    /// The manifest and the library both changed after signing.
    case bothChanged
    /// The digests match but the signature does not verify with its key (the file was edited).
    case badSignature

    /// What is wrong with the signature, in one line.
    package var description: String {
        switch self {
        case .unreadable(let reason): "\(PluginSignature.fileName) is unusable: \(reason)"
        case .manifestChanged: "\(PluginValidator.manifestFileName) changed after signing"
        case .libraryChanged(let signed, let now): "the library changed after signing (signed sha256 \(signed.prefix(16))…, now \(now.prefix(16))…)"
        case .bothChanged: "\(PluginValidator.manifestFileName) and the library changed after signing"
        case .badSignature: "the signature does not verify with the key it names (\(PluginSignature.fileName) was altered)"
        }
    }
}

extension ValidatedPlugin {
    /// Writes `plugin.sig` into the plugin's folder: `key`'s signature of the manifest's
    /// exact bytes and the library's SHA-256, as validated.
    /// `package`: for the CLI's folder commands (`list`, `new`, `pack`, `keygen`, `validate`).
    package func writeSignature(with key: PluginSigningKey) throws {
        try PluginSignature(signing: self, with: key).write(in: folder)
    }
}
