@_spi(Engine) import BerthCore
import Foundation

/// Who signed a plugin, as the host's trusted keys see it.
package enum SignatureStatus: Sendable, Equatable, CustomStringConvertible {
    /// No `plugin.sig`.
    case unsigned
    /// Signed by a key in the trusted-keys folder (named by its file).
    case trusted(PluginPublicKey)
    /// Signed by a key the folder does not hold (named as the signature names it).
    case unknownKey(PluginPublicKey)
    /// Signed by a key listed in `revoked-keys`.
    case revoked(PluginPublicKey)
    /// The signature does not hold for these files.
    case invalid(SignatureFault)

    /// What `berth list` shows in its signer column.
    package var description: String {
        switch self {
        case .unsigned: "unsigned"
        case .trusted(let key): key.name
        case .unknownKey(let key): "unknown key \(key.shortFingerprint) ('\(key.name)')"
        case .revoked(let key): "revoked key \(key.shortFingerprint) ('\(key.name)')"
        case .invalid: "invalid signature"
        }
    }

    /// The signing key, when a signature holds.
    package var key: PluginPublicKey? {
        switch self {
        case .trusted(let key), .unknownKey(let key), .revoked(let key): key
        case .unsigned, .invalid: nil
        }
    }

    /// Whether the signature already reports the library as changed.
    var saysLibraryChanged: Bool {
        guard case .invalid(let fault) = self else { return false }
        return switch fault {
        case .libraryChanged, .bothChanged: true
        case .unreadable, .manifestChanged, .badSignature: false
        }
    }

    /// Checks the signature in `folder` against the files' digests and the trusted keys.
    static func check(folder: RawFile.Folder, manifestSHA256: String, librarySHA256: String, trust: TrustedKeys) -> SignatureStatus {
        do {
            guard let signature = try PluginSignature.read(in: folder) else { return .unsigned }
            let key = try signature.verify(manifestSHA256: manifestSHA256, librarySHA256: librarySHA256)
            return trust.status(of: key)
        } catch {
            return .invalid(error)
        }
    }

    /// The one line that refuses the plugin, or nil. A signature that does not hold is
    /// always refused; unsigned, unknown and revoked only under `requireSignature`.
    func problem(folder: String, trust: TrustedKeys, requireSignature: Bool) -> PluginProblem? {
        let message: String
        switch self {
        case .trusted: return nil
        case .invalid(let fault):
            message = fault.description
        case .unsigned:
            guard requireSignature else { return nil }
            return PluginProblem(path: folder, field: "signature",
                                 message: "unsigned (no \(PluginSignature.fileName)), and --require-signature refuses unsigned plugins")
        case .unknownKey(let key):
            guard requireSignature else { return nil }
            message = "signed by '\(key.name)' with key \(key.shortFingerprint), which is not a trusted key in \(trust.place)"
        case .revoked(let key):
            guard requireSignature else { return nil }
            message = "signed with key \(key.shortFingerprint) ('\(key.name)'), which is revoked in \(trust.place)/\(TrustedKeys.revocationFileName)"
        }
        return PluginProblem(path: (folder as NSString).appendingPathComponent(PluginSignature.fileName), field: "signature", message: message)
    }
}

/// How a host treats signatures: where its trusted keys are, and whether it loads only
/// plugins signed by one of them.
public struct SignaturePolicy: Sendable, Equatable {
    /// The trusted-keys folder (nil: no key is trusted).
    public var trustedKeysFolder: String?
    /// Refuse unsigned plugins and those signed by an unknown or revoked key.
    public var requireSignature: Bool

    /// A policy over the keys in `trustedKeysFolder` (none when nil), refusing unsigned or untrusted plugins when `requireSignature` is set.
    public init(trustedKeysFolder: String? = nil, requireSignature: Bool = false) {
        self.trustedKeysFolder = trustedKeysFolder
        self.requireSignature = requireSignature
    }

    /// `$XDG_CONFIG_HOME/berth/trusted-keys`, else `~/.config/berth/trusted-keys`.
    public static func defaultTrustedKeysFolder(environment: [String: String] = ProcessInfo.processInfo.environment) -> String {
        if let config = environment["XDG_CONFIG_HOME"], !config.isEmpty { return config + "/berth/trusted-keys" }
        return (environment["HOME"] ?? NSHomeDirectory()) + "/.config/berth/trusted-keys"
    }

    /// The trusted keys as the folder holds them now.
    package func loadTrustedKeys() -> TrustedKeys {
        TrustedKeys(folder: trustedKeysFolder)
    }
}
