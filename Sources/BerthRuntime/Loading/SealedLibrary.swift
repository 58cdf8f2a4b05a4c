@_spi(Engine) import BerthCore
private import CBerthSystem
import Foundation

/// A library's validated bytes in sealed memory: a memory file (memfd) that no one, this
/// process included, can write, grow or shrink once sealed. Every generation's shadow copy
/// is written from it by the kernel (`sendfile`), so a reload of an unchanged library
/// neither reads nor hashes the file again, and what is loaded is always bytes that were
/// checked against validation.
final class SealedLibrary: Sendable {
    /// The SHA-256 validation computed for the bytes, lower-case hex.
    let digest: String
    /// The number of bytes.
    let size: Int
    private let descriptor: Int32

    private init(descriptor: Int32, digest: String, size: Int) {
        self.descriptor = descriptor
        self.digest = digest
        self.size = size
    }

    deinit {
        close(descriptor)
    }

    /// `plugin`'s library in sealed memory: the bytes validation kept (a small library),
    /// or else the file read again and hashed as it is written. Nil when the file no longer
    /// holds the validated bytes.
    static func make(of plugin: ValidatedPlugin) throws(HashingCopy.Failure) -> SealedLibrary? {
        let name = "berth-" + plugin.manifest.id
        let shownName = "memfd:" + name
        let descriptor = berth_sealable_memory_file(name)
        guard descriptor >= 0 else { throw HashingCopy.Failure(path: shownName) }
        var handedOver = false
        defer { if !handedOver { close(descriptor) } }
        if let kept = plugin.libraryBytes {
            if let failure = kept.withUnsafeBytes({ HashingCopy.writeAll($0, to: descriptor, target: shownName) }) {
                throw failure
            }
        } else {
            let written = try HashingCopy.copy(from: plugin.libraryPath, into: descriptor, outputName: shownName)
            guard written == plugin.librarySHA256 else { return nil }
        }
        var info = stat()
        guard berth_seal_memory_file(descriptor) == 0, fstat(descriptor, &info) == 0 else {
            throw HashingCopy.Failure(path: shownName)
        }
        handedOver = true
        return SealedLibrary(descriptor: descriptor, digest: plugin.librarySHA256, size: Int(info.st_size))
    }

    /// Writes the bytes to a new file `target` (mode 0600; a leftover of that name is replaced).
    func write(to target: String) throws(HashingCopy.Failure) {
        let output = try HashingCopy.create(target)
        defer { close(output) }
        var offset: off_t = 0
        while Int(offset) < size {
            // The offset is the call's own: copies written at once from one sealed file never
            // move each other's place.
            let sent = sendfile(output, descriptor, &offset, size - Int(offset))
            if sent < 0 {
                if errno == EINTR { continue }
                throw HashingCopy.Failure(path: target)
            }
            if sent == 0 { throw HashingCopy.Failure(path: target, code: EIO, systemError: "the sealed copy ended early") }
        }
    }
}
