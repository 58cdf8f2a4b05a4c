private import CBerthSystem
import Foundation

/// Whole-file reads and existence checks made with plain system calls. Validation runs them
/// on every load and reload, where `FileManager`'s versions (path bridging, attribute
/// dictionaries) cost several times the system call itself.
enum RawFile {
    /// What is at a path.
    enum Kind {
        case file, folder, other
    }

    /// What is at `path` (symlinks followed), nil when nothing is.
    static func kind(_ path: String) -> Kind? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        switch info.st_mode & S_IFMT {
        case S_IFREG: return .file
        case S_IFDIR: return .folder
        default: return .other
        }
    }

    /// Whether anything is at `path`.
    static func exists(_ path: String) -> Bool {
        kind(path) != nil
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
    private static func descriptorName(_ descriptor: Int32) -> String? {
        withUnsafeTemporaryAllocation(of: CChar.self, capacity: Int(PATH_MAX) + 1) { buffer -> String? in
            let length = readlink("/proc/self/fd/\(descriptor)", buffer.baseAddress!, Int(PATH_MAX))
            guard length > 0, length < Int(PATH_MAX), buffer[0] == CChar(UInt8(ascii: "/")) else { return nil }
            let name = String(decoding: UnsafeRawBufferPointer(start: buffer.baseAddress!, count: length), as: UTF8.self)
            return name.hasSuffix(" (deleted)") ? nil : name
        }
    }

    /// The file's bytes, read to its end; nil when it cannot be opened or read, or when it
    /// is longer than `limit` (`errno` says which: `ENOENT` for no file, `EFBIG` for too long).
    static func contents(_ path: String, limit: Int = .max) -> Data? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0 else { return nil }
        guard info.st_mode & S_IFMT != S_IFDIR else {
            errno = EISDIR
            return nil
        }
        // The size is a hint: a file still being written is read to wherever its end is.
        var data = Data(count: max(Int(info.st_size), 0) + 1)
        var length = 0
        while true {
            if length == data.count { data.count = data.count * 2 }
            let got = data.withUnsafeMutableBytes { buffer in
                read(descriptor, buffer.baseAddress! + length, buffer.count - length)
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
