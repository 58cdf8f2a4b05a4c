internal import Crypto
import Foundation

/// Copies a file in one pass and hashes the bytes as they are written, so a shadow copy
/// reads its library once (instead of a copy, then a second read of the copy to hash it).
enum HashingCopy {
    /// Bytes read and written per system call.
    private static let chunkBytes = 256 * 1024
    /// From this size a library is read whole, then hashed on a second thread while the
    /// calling one writes it: SHA-256 of a Swift plugin (a megabyte or more) costs about
    /// what writing it does, so the copy takes the longer of the two instead of their sum.
    private static let overlapBytes = 512 * 1024

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

        /// A failure on `path` with its own words.
        init(path: String, code: Int32, systemError: String) {
            self.path = path
            self.code = code
            self.systemError = systemError
        }
    }

    /// Copies `source` to a new file `target` (mode 0600; an existing file is replaced) and
    /// returns the lower-case hex SHA-256 of the bytes written.
    static func copy(from source: String, to target: String) throws(Failure) -> String {
        let (input, output) = try openBoth(source, target)
        // The input's descriptor is used below, not the object: it is kept open to the end.
        defer { withExtendedLifetime(input) { _ = close(output) } }
        let size = Int(input.info.st_size)
        if size >= overlapBytes {
            return try copyOverlapped(input.descriptor, to: output, sizeHint: size, source: source, target: target)
        }
        var hasher = SHA256()
        _ = try copyChunks(input.descriptor, to: output, chunkSize: chunkBytes, source: source, target: target) { chunk, _ in
            hasher.update(bufferPointer: chunk)
            return true
        }
        return HexDigest.hex(hasher.finalize())
    }

    /// Copies `source` to a new file `target` as `copy` does, but compares the bytes it reads
    /// with `expected` (the bytes validation read and hashed) instead of hashing them again:
    /// true when the file held exactly those bytes. A byte comparison proves at least what
    /// equal digests do, for a twentieth of SHA-256's time. It stops at the first difference.
    static func copy(from source: String, to target: String, matching expected: [UInt8]) throws(Failure) -> Bool {
        let (input, output) = try openBoth(source, target)
        // The input's descriptor is used below, not the object: it is kept open to the end.
        defer { withExtendedLifetime(input) { _ = close(output) } }
        let copied = try copyChunks(input.descriptor, to: output, chunkSize: min(expected.count + 1, chunkBytes), source: source, target: target) { chunk, offset in
            chunk.count <= expected.count - offset
                && expected.withUnsafeBytes { memcmp(chunk.baseAddress!, $0.baseAddress! + offset, chunk.count) == 0 }
        }
        return copied == expected.count
    }

    /// Reads `input` to its end in chunks and writes each chunk to `output` once `inspect`
    /// (given the chunk and its offset in the file) accepts it. Returns the bytes copied, or
    /// nil as soon as `inspect` refuses a chunk.
    private static func copyChunks(
        _ input: Int32, to output: Int32, chunkSize: Int, source: String, target: String,
        inspect: (UnsafeRawBufferPointer, Int) -> Bool
    ) throws(Failure) -> Int? {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: chunkSize, alignment: 16)
        defer { buffer.deallocate() }
        var offset = 0
        while true {
            let got = read(input, buffer.baseAddress, chunkSize)
            if got < 0 {
                if errno == EINTR { continue }
                throw Failure(path: source)
            }
            if got == 0 { return offset }
            let chunk = UnsafeRawBufferPointer(rebasing: buffer[0..<got])
            guard inspect(chunk, offset) else { return nil }
            if let failure = writeAll(chunk, to: output, target: target) { throw failure }
            offset += got
        }
    }

    /// `source` opened to read (closed when released), and `target` created to write (a
    /// leftover file of that name is replaced).
    private static func openBoth(_ source: String, _ target: String) throws(Failure) -> (input: RawFile.OpenFile, output: Int32) {
        // Opened as validation opens files, and only a regular file: a library swapped for a
        // FIFO after validation must not stall the load.
        guard let input = RawFile.OpenFile.reading(source) else { throw Failure(path: source) }
        guard input.isRegular else { throw Failure(path: source, code: EINVAL, systemError: "not a regular file") }
        let flags = O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC
        var output = open(target, flags, 0o600)
        // Unlinked only when there is one: a new generation's name is new, and a failed
        // unlink still costs a path lookup.
        if output < 0 && errno == EEXIST {
            unlink(target)
            output = open(target, flags, 0o600)
        }
        guard output >= 0 else { throw Failure(path: target) }
        return (input, output)
    }

    private static func copyOverlapped(
        _ input: Int32, to output: Int32, sizeHint: Int, source: String, target: String
    ) throws(Failure) -> String {
        // The size is a hint: a file still being written is read to wherever its end is
        // (and then refused by the digest check).
        var buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: sizeHint + 1, alignment: 16)
        defer { buffer.deallocate() }
        var length = 0
        while true {
            if length == buffer.count {
                let larger = UnsafeMutableRawBufferPointer.allocate(byteCount: buffer.count * 2, alignment: 16)
                larger.copyMemory(from: UnsafeRawBufferPointer(buffer))
                buffer.deallocate()
                buffer = larger
            }
            let got = read(input, buffer.baseAddress! + length, buffer.count - length)
            if got < 0 {
                if errno == EINTR { continue }
                throw Failure(path: source)
            }
            if got == 0 { break }
            length += got
        }
        let overlap = Overlap(UnsafeRawBufferPointer(rebasing: buffer[0..<length]))
        DispatchQueue.concurrentPerform(iterations: 2) { part in
            if part == 0 {
                var hasher = SHA256()
                hasher.update(bufferPointer: overlap.bytes)
                overlap.digest = HexDigest.hex(hasher.finalize())
            } else {
                overlap.failure = writeAll(overlap.bytes, to: output, target: target)
            }
        }
        if let failure = overlap.failure { throw failure }
        return overlap.digest
    }

    /// The bytes both halves of an overlapped copy read, and what each produced. Each field
    /// is written by one half only, and read after `concurrentPerform` has joined both.
    private final class Overlap: @unchecked Sendable {
        let bytes: UnsafeRawBufferPointer
        var digest = ""
        var failure: Failure?

        init(_ bytes: UnsafeRawBufferPointer) {
            self.bytes = bytes
        }
    }

    /// Writes all of `bytes`; the failure, if any.
    private static func writeAll(_ bytes: UnsafeRawBufferPointer, to output: Int32, target: String) -> Failure? {
        var written = 0
        while written < bytes.count {
            let wrote = write(output, bytes.baseAddress! + written, bytes.count - written)
            if wrote < 0 {
                if errno == EINTR { continue }
                return Failure(path: target)
            }
            written += wrote
        }
        return nil
    }
}
