@_spi(Engine) import BerthCore
internal import Crypto
import Foundation
internal import Glibc

/// An Ed25519 key pair that signs plugins: `NAME.private` stays with the author,
/// `NAME.public` goes into a host's trusted-keys folder.
///
/// Both files are one line of text: a type tag and the raw key in base64
/// (`berth-ed25519-private <32-byte seed>`, `berth-ed25519-public <32-byte key>`).
/// `package`: for the CLI's folder commands (`list`, `new`, `pack`, `keygen`, `validate`).
package struct PluginSigningKey: Sendable {
    /// The key's name (its file name without the extension); shown as the signer.
    package let name: String
    /// The 32-byte seed (kept as bytes: the key type itself is not Sendable).
    private let seed: [UInt8]
    private var key: Curve25519.Signing.PrivateKey {
        // The seed was checked when this value was made.
        guard let key = try? Curve25519.Signing.PrivateKey(rawRepresentation: seed) else { preconditionFailure("a checked 32-byte seed") }
        return key
    }

    /// A fresh random key.
    package init(name: String) {
        self.name = name
        seed = [UInt8](Curve25519.Signing.PrivateKey().rawRepresentation)
    }

    /// Reads a `NAME.private` file.
    package init(contentsOf path: String) throws(SigningKeyError) {
        let raw = try KeyFile.read(path, tag: KeyFile.privateTag)
        guard (try? Curve25519.Signing.PrivateKey(rawRepresentation: raw)) != nil else {
            throw SigningKeyError(path: path, "is not an Ed25519 private key (\(raw.count) bytes, expected 32)")
        }
        seed = raw
        name = KeyFile.name(of: path)
    }

    /// The package half.
    package var publicKey: PluginPublicKey {
        PluginPublicKey(name: name, rawKey: [UInt8](key.publicKey.rawRepresentation))
    }

    /// Writes `DIR/NAME.private` (mode 0600) and `DIR/NAME.public`; refuses to overwrite
    /// either. Returns the two paths.
    package func write(to folder: String) throws(SigningKeyError) -> (privateKey: String, publicKey: String) {
        let privatePath = (folder as NSString).appendingPathComponent("\(name).\(KeyFile.privateExtension)")
        let publicPath = (folder as NSString).appendingPathComponent("\(name).\(KeyFile.publicExtension)")
        for path in [privatePath, publicPath] where FileManager.default.fileExists(atPath: path) {
            throw SigningKeyError(path: path, "already exists; choose another --name or remove it")
        }
        do {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        } catch {
            throw SigningKeyError(path: folder, "cannot create the folder: \(error.localizedDescription)")
        }
        try KeyFile.write(privatePath, tag: KeyFile.privateTag, raw: seed, mode: 0o600)
        try KeyFile.write(publicPath, tag: KeyFile.publicTag, raw: publicKey.rawKey, mode: 0o644)
        return (privatePath, publicPath)
    }

    /// The Ed25519 signature of `message`.
    func signature(for message: [UInt8]) throws(SigningKeyError) -> [UInt8] {
        do {
            return [UInt8](try key.signature(for: message))
        } catch {
            throw SigningKeyError(path: name, "cannot sign: \(error)")
        }
    }
}

/// An Ed25519 package key: a trusted key from a `NAME.public` file, or the key a signature
/// names.
package struct PluginPublicKey: Sendable, Hashable {
    /// Its file name without `.public` (or the name a signature gives).
    package let name: String
    /// The 32 raw key bytes.
    package let rawKey: [UInt8]

    init(name: String, rawKey: [UInt8]) {
        self.name = name
        self.rawKey = rawKey
    }

    /// Reads a `NAME.public` file.
    package init(contentsOf path: String) throws(SigningKeyError) {
        let raw = try KeyFile.read(path, tag: KeyFile.publicTag)
        guard (try? Curve25519.Signing.PublicKey(rawRepresentation: raw)) != nil else {
            throw SigningKeyError(path: path, "is not an Ed25519 package key (\(raw.count) bytes, expected 32)")
        }
        self.init(name: KeyFile.name(of: path), rawKey: raw)
    }

    /// The SHA-256 of the raw key, lower-case hex: what a revocation list names.
    package var fingerprint: String { HexDigest.sha256(rawKey) }

    /// The first 16 hex digits of the fingerprint, for one-line messages.
    package var shortFingerprint: String { String(fingerprint.prefix(16)) }

    /// The key in base64, as a signature file carries it.
    var base64: String { Data(rawKey).base64EncodedString() }

    /// Whether `signature` is this key's signature of `message`.
    func verifies(_ signature: [UInt8], of message: [UInt8]) -> Bool {
        guard let key = try? Curve25519.Signing.PublicKey(rawRepresentation: rawKey) else { return false }
        return key.isValidSignature(signature, for: message)
    }
}

/// A key file that cannot be read, parsed or written: the path and what is wrong.
/// `package`: for the CLI's folder commands (`list`, `new`, `pack`, `keygen`, `validate`).
package struct SigningKeyError: Error, Sendable, CustomStringConvertible {
    package var path: String
    package var message: String

    init(path: String, _ message: String) {
        self.path = path
        self.message = message
    }

    package var description: String { "\(path): \(message)" }
}

/// The one-line key file format.
enum KeyFile {
    static let privateTag = "berth-ed25519-private"
    static let publicTag = "berth-ed25519-public"
    static let privateExtension = "private"
    static let publicExtension = "public"

    static func name(of path: String) -> String {
        ((path as NSString).lastPathComponent as NSString).deletingPathExtension
    }

    static func read(_ path: String, tag: String) throws(SigningKeyError) -> [UInt8] {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw SigningKeyError(path: path, "cannot read the key file")
        }
        let words = String(decoding: data, as: UTF8.self).split(whereSeparator: \.isWhitespace)
        guard words.count == 2, words[0] == tag, let raw = Data(base64Encoded: String(words[1])) else {
            throw SigningKeyError(path: path, "expected one line '\(tag) <base64 key>'")
        }
        return [UInt8](raw)
    }

    /// Creates the file with its final mode (O_EXCL: never over an existing file), so a
    /// private key is never readable by others, not even for a moment.
    static func write(_ path: String, tag: String, raw: [UInt8], mode: mode_t) throws(SigningKeyError) {
        let line = Array("\(tag) \(Data(raw).base64EncodedString())\n".utf8)
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode)
        guard descriptor >= 0 else {
            throw SigningKeyError(path: path, "cannot create the key file: \(String(cString: strerror(errno)))")
        }
        defer { close(descriptor) }
        let written = line.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
        guard written == line.count else {
            throw SigningKeyError(path: path, "cannot write the key file: \(String(cString: strerror(errno)))")
        }
    }
}
