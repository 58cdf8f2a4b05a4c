@_spi(Engine) import BerthCore
import Foundation

/// The keys a host trusts: every `*.public` file in its trusted-keys folder, minus the
/// keys listed in that folder's `revoked-keys` file.
///
/// `revoked-keys` is text, one key fingerprint a line (the 64 hex digits `berth keygen`
/// and `berth list --json` print); `#` starts a comment. A revoked key is refused even when
/// its `.public` file is still in the folder.
package struct TrustedKeys: Sendable {
    /// The file in the trusted-keys folder that lists revoked keys, one name per line.
    package static let revocationFileName = "revoked-keys"

    /// The folder read (nil: no trusted keys).
    package let folder: String?
    /// Trusted keys by fingerprint.
    private(set) var keys: [String: PluginPublicKey] = [:]
    /// Revoked fingerprints.
    private(set) var revoked: Set<String> = []
    /// Key files or revocation lines that could not be read; never fatal, each names its file.
    package private(set) var problems: [PluginProblem] = []

    /// Reads `folder`; a folder that does not exist holds no keys.
    package init(folder: String?) {
        self.folder = folder
        guard let folder, let entries = try? FileManager.default.contentsOfDirectory(atPath: folder) else { return }
        for entry in entries.sorted() where entry.hasSuffix(".\(KeyFile.publicExtension)") {
            let path = (folder as NSString).appendingPathComponent(entry)
            do {
                let key = try PluginPublicKey(contentsOf: path)
                keys[key.fingerprint] = key
            } catch {
                problems.append(PluginProblem(path: path, field: "key", message: error.message, severity: .warning))
            }
        }
        readRevocations(in: folder)
    }

    private mutating func readRevocations(in folder: String) {
        let path = (folder as NSString).appendingPathComponent(Self.revocationFileName)
        guard let data = FileManager.default.contents(atPath: path) else { return }
        let hexDigits = Set("0123456789abcdef")
        for (index, line) in String(decoding: data, as: UTF8.self).split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let entry = line.prefix { $0 != "#" }.trimmingCharacters(in: .whitespaces).lowercased()
            guard !entry.isEmpty else { continue }
            guard entry.count == 64, entry.allSatisfy(hexDigits.contains) else {
                problems.append(PluginProblem(path: path, field: "line \(index + 1)",
                                              message: "expected a key fingerprint (64 hex digits), found '\(entry.prefix(70))'", severity: .warning))
                continue
            }
            revoked.insert(entry)
        }
    }

    /// How this folder judges a signature made by `key`.
    func status(of key: PluginPublicKey) -> SignatureStatus {
        if revoked.contains(key.fingerprint) { return .revoked(key) }
        if let trusted = keys[key.fingerprint] { return .trusted(trusted) }
        return .unknownKey(key)
    }

    /// Where the message says trusted keys come from.
    var place: String { folder ?? "(no trusted-keys folder)" }
}
