@_spi(Engine) import BerthCore
import Foundation

/// Which other processes may still be writing a file: those holding it open for writing,
/// or mapped shared and writable (an mmap-style writer can fill the middle of a library
/// after its size, header and symbols look complete). Read from /proc, so Linux only.
enum OpenWriters {
    /// Process ids, other than this one, that may still write `path`.
    static func of(_ path: String) -> [Int32] {
        let target = PluginValidator.realPath(path)
        guard let identity = fileIdentity(target) else { return [] }
        let me = getpid()
        var writers: [Int32] = []
        for entry in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] {
            guard let pid = Int32(entry), pid != me else { continue }
            if holdsForWriting(pid, target) || mapsWritable(pid, identity) { writers.append(pid) }
        }
        return writers.sorted()
    }

    private static func fileIdentity(_ path: String) -> (device: UInt64, inode: UInt64)? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return (UInt64(info.st_dev), UInt64(info.st_ino))
    }

    /// An open descriptor on the file whose flags include O_WRONLY or O_RDWR.
    private static func holdsForWriting(_ pid: Int32, _ target: String) -> Bool {
        let fdFolder = "/proc/\(pid)/fd"
        for fd in (try? FileManager.default.contentsOfDirectory(atPath: fdFolder)) ?? [] {
            guard let link = try? FileManager.default.destinationOfSymbolicLink(atPath: "\(fdFolder)/\(fd)"), link == target else { continue }
            guard let info = try? String(contentsOfFile: "/proc/\(pid)/fdinfo/\(fd)", encoding: .utf8),
                  let line = info.split(separator: "\n").first(where: { $0.hasPrefix("flags:") }),
                  let flags = Int(line.dropFirst("flags:".count).trimmingCharacters(in: .whitespaces), radix: 8)
            else { continue }
            if flags & Int(O_ACCMODE) != Int(O_RDONLY) { return true }
        }
        return false
    }

    /// A shared, writable mapping of the file (`rw-s` in /proc/PID/maps).
    private static func mapsWritable(_ pid: Int32, _ identity: (device: UInt64, inode: UInt64)) -> Bool {
        guard let maps = try? String(contentsOfFile: "/proc/\(pid)/maps", encoding: .utf8) else { return false }
        for line in maps.split(separator: "\n") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard fields.count >= 5, fields[1].hasPrefix("rw"), fields[1].hasSuffix("s"), UInt64(fields[4]) == identity.inode else { continue }
            return true
        }
        return false
    }
}
