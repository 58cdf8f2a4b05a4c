internal import Crypto
import Foundation

/// Copies a file in one pass and hashes the bytes as they are written, so a shadow copy
/// reads its library once (instead of a copy, then a second read of the copy to hash it).
enum HashingCopy {
    /// Bytes read and written per system call.
    private static let chunkBytes = 256 * 1024

    /// What went wrong, with the path it happened on and the system's text.
    struct Failure: Error {
        let path: String
        /// The `errno` value.
        let code: Int32
        let systemError: String

        /// A failure on `path` of the system call that just set `errno`.
        init(path: String) {
            self.path = path
            code = errno
            systemError = String(cString: strerror(code))
        }
    }

    /// Copies `source` to a new file `target` (mode 0600; an existing file is replaced) and
    /// returns the lower-case hex SHA-256 of the bytes written.
    static func copy(from source: String, to target: String) throws(Failure) -> String {
        let input = open(source, O_RDONLY | O_CLOEXEC)
        guard input >= 0 else { throw Failure(path: source) }
        defer { close(input) }
        let flags = O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC
        var output = open(target, flags, 0o600)
        // A leftover file of that name is replaced (unlinked only when there is one: a new
        // generation's name is new, and a failed unlink still costs a path lookup).
        if output < 0 && errno == EEXIST {
            unlink(target)
            output = open(target, flags, 0o600)
        }
        guard output >= 0 else { throw Failure(path: target) }
        defer { close(output) }

        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: chunkBytes, alignment: 16)
        defer { buffer.deallocate() }
        var hasher = SHA256()
        while true {
            let got = read(input, buffer.baseAddress, chunkBytes)
            if got < 0 {
                if errno == EINTR { continue }
                throw Failure(path: source)
            }
            if got == 0 { break }
            let chunk = UnsafeRawBufferPointer(rebasing: buffer[0..<got])
            hasher.update(bufferPointer: chunk)
            var written = 0
            while written < got {
                let wrote = write(output, chunk.baseAddress! + written, got - written)
                if wrote < 0 {
                    if errno == EINTR { continue }
                    throw Failure(path: target)
                }
                written += wrote
            }
        }
        return HexDigest.hex(hasher.finalize())
    }
}
