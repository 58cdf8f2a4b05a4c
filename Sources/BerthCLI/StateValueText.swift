import Foundation

/// A `@State` or `@Persisted` value as `state` shows it: decoded when its fingerprint is one
/// of the SDK's built-in types (BerthSDK/Views/StateCodable.swift) or its bytes are JSON
/// (a `Codable` type), else nil (the caller shows the fingerprint and the size).
enum StateValueText {
    private enum Builtin {
        case integer, double, bool, string
    }

    /// The SDK fingerprints a type by FNV-1a of its full name; these are the built-ins'.
    private static let builtins: [UInt64: (name: String, kind: Builtin)] = Dictionary(uniqueKeysWithValues: [
        ("Swift.Int", "Int", Builtin.integer), ("Swift.Int64", "Int64", .integer), ("Swift.Double", "Double", .double),
        ("Swift.Bool", "Bool", .bool), ("Swift.String", "String", .string),
    ].map { (fingerprint(of: $0.0), ($0.1, $0.2)) })

    static func decoded(fingerprint: UInt64, bytes: [UInt8]) -> String? {
        if let builtin = builtins[fingerprint] { return builtinText(builtin.kind, bytes).map { "\($0) (\(builtin.name))" } }
        guard let object = try? JSONSerialization.jsonObject(with: Data(bytes), options: [.fragmentsAllowed]),
              let json = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .fragmentsAllowed])
        else { return nil }
        return TerminalText.visible(String(decoding: json, as: UTF8.self)) + " (JSON)"
    }

    /// A persisted value: a Swift plugin's `@Persisted` stores its type's fingerprint (8
    /// bytes, little-endian) before the value, which is a built-in's or JSON (any other
    /// `Codable`). A C plugin's bytes have no fingerprint, and guessing JSON in them could
    /// show a value that is not there: only built-in fingerprints are decoded for it.
    static func persisted(_ stored: [UInt8], swiftPlugin: Bool) -> String? {
        guard stored.count >= 8 else { return nil }
        let fingerprint = littleEndian(stored.prefix(8))
        if swiftPlugin { return decoded(fingerprint: fingerprint, bytes: Array(stored.dropFirst(8))) }
        guard let builtin = builtins[fingerprint] else { return nil }
        return builtinText(builtin.kind, Array(stored.dropFirst(8))).map { "\($0) (\(builtin.name))" }
    }

    private static func builtinText(_ kind: Builtin, _ bytes: [UInt8]) -> String? {
        switch kind {
        case .integer, .double:
            guard bytes.count == 8 else { return nil }
            let raw = littleEndian(bytes[...])
            return kind == .integer ? String(Int64(bitPattern: raw)) : String(Double(bitPattern: raw))
        case .bool:
            guard bytes.count == 1 else { return nil }
            return bytes[0] != 0 ? "true" : "false"
        case .string:
            return "\"" + TerminalText.visible(String(decoding: bytes, as: UTF8.self)) + "\""
        }
    }

    private static func littleEndian(_ bytes: ArraySlice<UInt8>) -> UInt64 {
        bytes.reversed().reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
    }

    /// FNV-1a, 64 bit, as the SDK computes it.
    private static func fingerprint(of text: String) -> UInt64 {
        text.utf8.reduce(UInt64(0xcbf2_9ce4_8422_2325)) { ($0 ^ UInt64($1)) &* 0x0000_0100_0000_01b3 }
    }
}
