internal import Crypto
import Foundation

/// Lower-case hex of a SHA-256, by table: `String(format:)` is slow and, through the Swift
/// runtime's conformance lookups, grows slower with every retired image (see
/// Docs/benchmarks.md).
enum HexDigest {
    private static let digits = Array("0123456789abcdef".utf8)

    static func sha256(_ bytes: some DataProtocol) -> String {
        hex(SHA256.hash(data: bytes))
    }

    static func hex(_ bytes: some Sequence<UInt8>) -> String {
        var text: [UInt8] = []
        text.reserveCapacity(64)
        for byte in bytes {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
    }
}
