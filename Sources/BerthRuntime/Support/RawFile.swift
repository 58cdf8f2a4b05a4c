@_spi(Engine) import BerthCore
private import CBerthSystem
import Foundation

/// Whole-file reads and existence checks made with plain system calls. Validation runs them
/// on every load and reload, where `FileManager`'s versions (path bridging, attribute
/// dictionaries) cost several times the system call itself.
enum RawFile {
    /// What is at a path.
    enum Kind {
        case file, folder, other

        init(_ mode: UInt32) {
            switch mode & S_IFMT {
            case S_IFREG: self = .file
            case S_IFDIR: self = .folder
            default: self = .other
            }
        }
    }

    /// What is at `path` (symlinks followed), nil when nothing is.
    static func kind(_ path: String) -> Kind? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return Kind(info.st_mode)
    }

    /// Whether anything is at `path`.
    static func exists(_ path: String) -> Bool {
        kind(path) != nil
    }

    /// A folder opened for its place (`O_PATH`) once per validation: files inside it are found
    /// from it with a one-name lookup instead of a walk of the whole path, and a library path
    /// is proved to stay inside it by the kernel. A folder that cannot be opened so (the
    /// descriptor is -1) leaves every lookup to the whole path.
    final class Folder {
        let path: String
        let descriptor: Int32

        init(_ path: String) {
            self.path = path
            descriptor = berth_open_place(path.isEmpty ? "." : path)
        }

        deinit {
            if descriptor >= 0 { close(descriptor) }
        }

        /// What the place is: nil when nothing is there.
        var kind: Kind? {
            var info = stat()
            guard descriptor >= 0, fstat(descriptor, &info) == 0 else { return nil }
            return Kind(info.st_mode)
        }

        /// The folder's real path, every symlink resolved.
        var realPath: String? {
            guard descriptor >= 0 else { return nil }
            return RawFile.descriptorName(descriptor)
        }

        /// The bytes of the file `name` in this folder (as `RawFile.contents`).
        func contents(_ name: String, limit: Int = .max) -> Data? {
            guard descriptor >= 0 else { return RawFile.contents(path.isEmpty ? name : path + "/" + name, limit: limit) }
            return RawFile.read(openat(descriptor, name, RawFile.readFlags), limit: limit)
        }

        /// The file at `relative` below this folder, opened for reading, when the way there is
        /// plain names only: no symlink, no `.` or `..`, never out of the folder. Nil for
        /// anything else, which the caller then resolves the long way. What is read from it
        /// is what the kernel proved to be inside, whatever happens to the path afterwards.
        func plainFile(_ relative: String) -> OpenFile? {
            guard descriptor >= 0, Self.isPlain(relative) else { return nil }
            return OpenFile(berth_open_beneath(descriptor, relative, RawFile.readFlags))
        }

        private static func isPlain(_ relative: String) -> Bool {
            guard !relative.isEmpty, relative.utf8.first != UInt8(ascii: "/") else { return false }
            return relative.utf8.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false).allSatisfy { name in
                !name.isEmpty && !name.elementsEqual(".".utf8) && !name.elementsEqual("..".utf8)
            }
        }
    }

    /// A file open for reading, closed when released, with what `fstat` said of it on opening.
    final class OpenFile {
        let descriptor: Int32
        let info: stat

        /// Takes `descriptor` (from an open call; nil when it is -1 or cannot be looked at).
        init?(_ descriptor: Int32) {
            guard descriptor >= 0 else { return nil }
            var info = stat()
            guard fstat(descriptor, &info) == 0 else {
                close(descriptor)
                return nil
            }
            self.descriptor = descriptor
            self.info = info
        }

        deinit { close(descriptor) }

        /// Whether it is a regular file (not a folder, FIFO, socket or device).
        var isRegular: Bool { Kind(info.st_mode) == .file }

        /// The file at `path` opened for reading as `RawFile.contents` opens it; nil when it
        /// cannot be.
        static func reading(_ path: String) -> OpenFile? {
            OpenFile(open(path, RawFile.readFlags))
        }

        /// The file's bytes, as `RawFile.contents` reads them: from where the descriptor is
        /// (its start, when nothing read it before) to the end; nil with `EFBIG`, before
        /// anything is read, when `fstat` says it is longer than `limit`.
        func bytes(limit: Int = .max) -> [UInt8]? {
            RawFile.read(descriptor, info: info, limit: limit).map { [UInt8]($0) }
        }

        /// Its size as `fstat` said on opening.
        var size: Int { Int(info.st_size) }
    }

    /// Where `path` really is (every symlink resolved) and what `stat` says of it there,
    /// nil when it cannot be opened. One `O_PATH` open, its `fstat` and the kernel's name for
    /// the descriptor (`/proc/self/fd`) cost a fraction of `realpath`, which looks at every
    /// component of the path; `realpath` is the fallback where `/proc` is not mounted.
    static func resolved(_ path: String) -> (path: String, info: stat)? {
        let descriptor = berth_open_place(path)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { return nil }
        if let name = descriptorName(descriptor) { return (name, info) }
        guard let real = realpath(path, nil) else { return nil }
        defer { free(real) }
        return (String(cString: real), info)
    }

    /// The absolute path the kernel gives an open descriptor; nil when `/proc` cannot say, or
    /// when the file was deleted since it was opened.
    fileprivate static func descriptorName(_ descriptor: Int32) -> String? {
        withUnsafeTemporaryAllocation(of: CChar.self, capacity: Int(PATH_MAX) + 1) { buffer -> String? in
            let length = readlink("/proc/self/fd/\(descriptor)", buffer.baseAddress!, Int(PATH_MAX))
            guard length > 0, length < Int(PATH_MAX), buffer[0] == CChar(UInt8(ascii: "/")) else { return nil }
            let name = String(decoding: UnsafeRawBufferPointer(start: buffer.baseAddress!, count: length), as: UTF8.self)
            return name.hasSuffix(" (deleted)") ? nil : name
        }
    }

    /// The file's bytes, read to its end; nil when it cannot be opened or read, when it is
    /// not a regular file, or when it is longer than `limit` (`errno` says which: `ENOENT`
    /// for no file, `EISDIR` for a folder, `EINVAL` for a FIFO or device, `ENXIO` for a
    /// socket, `EFBIG` for too long; `failure` says it in words, read at once).
    static func contents(_ path: String, limit: Int = .max) -> Data? {
        read(open(path, readFlags), limit: limit)
    }

    /// How files are opened to be read: a FIFO named as a manifest or library must not
    /// stall validation (or a copy) until someone writes to it, so the open does not wait.
    static let readFlags = O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC

    /// The one-line reason a file at `path` is over `limit`, with its size as `stat` says now.
    static func tooLong(_ path: String, limit: Int, what: String) -> String {
        var info = stat()
        let size = stat(path, &info) == 0 ? Int(info.st_size) : -1
        return tooLong(size: size, limit: limit, what: what)
    }

    /// `"is 1610612736 bytes (1.5 GiB); a manifest may have at most 1048576 (1 MiB)"`.
    static func tooLong(size: Int, limit: Int, what: String) -> String {
        let shown = size < 0 ? "longer than the limit" : "\(size) bytes (\(ByteCountText.binary(size)))"
        return "is \(shown); \(what) may have at most \(limit) (\(ByteCountText.binary(limit))), and nothing of it was read"
    }

    /// Why the last read failed, for a problem's message ("it is not a regular file").
    static var failure: String {
        switch errno {
        case EISDIR: "it is a folder"
        case EINVAL, ENXIO: "it is not a regular file"
        case EFBIG: "it is too long"
        default: String(cString: strerror(errno))
        }
    }

    /// Reads `descriptor` (closed after) to its end, as `contents`.
    fileprivate static func read(_ descriptor: Int32, limit: Int) -> Data? {
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { return nil }
        return read(descriptor, info: info, limit: limit)
    }

    /// Reads the open `descriptor`, which `info` describes, to its end. A file that `fstat`
    /// says is longer than `limit` is refused before a byte is read or a buffer is sized by
    /// it (a sparse file of gigabytes costs nothing to make).
    fileprivate static func read(_ descriptor: Int32, info: stat, limit: Int) -> Data? {
        guard info.st_mode & S_IFMT == S_IFREG else {
            errno = info.st_mode & S_IFMT == S_IFDIR ? EISDIR : EINVAL
            return nil
        }
        guard Int(info.st_size) <= limit else {
            errno = EFBIG
            return nil
        }
        // The size is a hint: a file still being written is read to wherever its end is.
        var data = Data(count: max(Int(info.st_size), 0) + 1)
        var length = 0
        while true {
            if length == data.count { data.count = min(data.count * 2, limit == .max ? .max : limit + 1) }
            let got = data.withUnsafeMutableBytes { buffer in
                Glibc.read(descriptor, buffer.baseAddress! + length, buffer.count - length)
            }
            if got < 0 {
                if errno == EINTR { continue }
                return nil
            }
            if got == 0 { break }
            length += got
            if length > limit {
                errno = EFBIG
                return nil
            }
        }
        data.count = length
        return data
    }
}
