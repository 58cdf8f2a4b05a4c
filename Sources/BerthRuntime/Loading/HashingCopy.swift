@_spi(Engine) import BerthCore
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
    /// Up to this size only: a larger library is copied and hashed a chunk at a time, so the
    /// host never holds more than this of a library at once.
    private static let overlapLimitBytes = 32 * 1024 * 1024

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
        // The source first: a refused one leaves no target behind.
        let input = try openSource(source)
        let output = try create(target)
        defer { _ = close(output) }
        return try copy(input, from: source, into: output, outputName: target)
    }

    /// Copies `source` into `output`, an open descriptor (named `outputName` in a failure),
    /// and returns the lower-case hex SHA-256 of the bytes written.
    static func copy(from source: String, into output: Int32, outputName: String) throws(Failure) -> String {
        try copy(try openSource(source), from: source, into: output, outputName: outputName)
    }

    /// `source` opened as validation opens files, and only a regular file: a library swapped
    /// for a FIFO after validation must not stall the load.
    private static func openSource(_ source: String) throws(Failure) -> RawFile.OpenFile {
        guard let input = RawFile.OpenFile.reading(source) else { throw Failure(path: source) }
        guard input.isRegular else { throw Failure(path: source, code: EINVAL, systemError: "not a regular file") }
        // Validation refused a larger one; one grown since is refused before it is read.
        guard input.size <= PluginValidator.libraryBytesLimit else {
            throw Failure(path: source, code: EFBIG, systemError: RawFile.tooLong(size: input.size, limit: PluginValidator.libraryBytesLimit, what: "a library"))
        }
        return input
    }

    private static func copy(_ input: RawFile.OpenFile, from source: String, into output: Int32, outputName target: String) throws(Failure) -> String {
        // The input's descriptor is used below, not the object: it is kept open to the end.
        defer { withExtendedLifetime(input) {} }
        let size = Int(input.info.st_size)
        if size >= overlapBytes && size <= overlapLimitBytes {
            return try copyOverlapped(input.descriptor, to: output, sizeHint: size, source: source, target: target)
        }
        return try copyChunks(input.descriptor, to: output, source: source, target: target)
    }

    /// A new file `target` opened to write (mode 0600); a leftover file of that name is replaced.
    static func create(_ target: String) throws(Failure) -> Int32 {
        let flags = O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC
        var output = open(target, flags, 0o600)
        // Unlinked only when there is one: a new generation's name is new, and a failed
        // unlink still costs a path lookup.
        if output < 0 && errno == EEXIST {
            unlink(target)
            output = open(target, flags, 0o600)
        }
        guard output >= 0 else { throw Failure(path: target) }
        return output
    }

    /// Reads `input` to its end in chunks, hashing and writing each; returns the digest.
    private static func copyChunks(_ input: Int32, to output: Int32, source: String, target: String) throws(Failure) -> String {
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: chunkBytes, alignment: 16)
        defer { buffer.deallocate() }
        var hasher = SHA256()
        while true {
            let got = read(input, buffer.baseAddress, chunkBytes)
            if got < 0 {
                if errno == EINTR { continue }
                throw Failure(path: source)
            }
            if got == 0 { return HexDigest.hex(hasher.finalize()) }
            let chunk = UnsafeRawBufferPointer(rebasing: buffer[0..<got])
            hasher.update(bufferPointer: chunk)
            if let failure = writeAll(chunk, to: output, target: target) { throw failure }
        }
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
                // A file that grew while it was read is refused past the overlap's limit.
                guard length <= overlapLimitBytes else {
                    throw Failure(path: source, code: EFBIG, systemError: RawFile.tooLong(size: length, limit: overlapLimitBytes, what: "a library copied in one piece"))
                }
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
    static func writeAll(_ bytes: UnsafeRawBufferPointer, to output: Int32, target: String) -> Failure? {
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
