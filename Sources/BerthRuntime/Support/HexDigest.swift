@_spi(Engine) import BerthCore
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

    /// The SHA-256 of the open file `descriptor` from its start to its end, read a chunk at a
    /// time (`pread`: the descriptor's position is left alone); nil when a read fails.
    static func sha256(streaming descriptor: Int32) -> String? {
        let chunkBytes = 256 * 1024
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: chunkBytes, alignment: 16)
        defer { buffer.deallocate() }
        var hasher = SHA256()
        var offset: off_t = 0
        while true {
            let got = pread(descriptor, buffer.baseAddress, chunkBytes, offset)
            if got < 0 {
                if errno == EINTR { continue }
                return nil
            }
            if got == 0 { return hex(hasher.finalize()) }
            hasher.update(bufferPointer: UnsafeRawBufferPointer(rebasing: buffer[0..<got]))
            offset += off_t(got)
        }
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
