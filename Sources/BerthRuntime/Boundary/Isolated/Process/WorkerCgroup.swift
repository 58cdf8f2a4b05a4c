import Foundation

/// A worker's own cgroup (v2), beside the host's: everything the worker starts is in it,
/// whatever session or process group it makes, and `cgroup.kill` ends them all at once
/// (Docs/security.md). Made when the host may create cgroups next to its own (root, or a
/// delegated subtree such as a systemd user service); elsewhere a worker has none and the
/// host relies on the filter (no fork) and its process-group kill.
///
/// The worker is moved in right after `posix_spawn`, before the host sends its hello: no
/// plugin code has run by then, so nothing it starts can be left outside.
package final class WorkerCgroup: Sendable {
    /// Its folder in the cgroup2 file system.
    package let path: String

    private init(path: String) {
        self.path = path
    }

    /// The folder of the host's own cgroup in a writable cgroup2 mount; nil without one.
    package static let hostFolder: String? = {
        guard let membership = try? String(contentsOfFile: "/proc/self/cgroup", encoding: .utf8),
              let line = membership.split(separator: "\n").first(where: { $0.hasPrefix("0::") }),
              let mounts = try? String(contentsOfFile: "/proc/self/mountinfo", encoding: .utf8) else { return nil }
        let own = String(line.dropFirst(3))
        for mount in mounts.split(separator: "\n") {
            // "ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS… - TYPE SOURCE SUPER-OPTIONS"
            let halves = mount.components(separatedBy: " - ")
            let fields = halves[0].split(separator: " ")
            guard halves.count == 2, halves[1].hasPrefix("cgroup2 "), fields.count >= 6, fields[5].hasPrefix("rw") else { continue }
            let root = String(fields[3])
            guard own == root || own.hasPrefix(root == "/" ? "/" : root + "/") else { continue }
            let folder = String(fields[4]) + (root == "/" ? own : String(own.dropFirst(root.count)))
            return access(folder, W_OK) == 0 ? (folder.hasSuffix("/") ? String(folder.dropLast()) : folder) : nil
        }
        return nil
    }()

    /// Whether workers get cgroups of their own here.
    package static var isAvailable: Bool { hostFolder != nil }

    /// A new cgroup beside the host's, with `pid` moved into it; nil when that cannot be done.
    static func make(for pid: Int32) -> WorkerCgroup? {
        guard let hostFolder else { return nil }
        _ = staleRemoved
        let path = hostFolder + "/berth-\(getpid())-worker-\(pid)"
        guard mkdir(path, 0o755) == 0 || errno == EEXIST else { return nil }
        let cgroup = WorkerCgroup(path: path)
        guard cgroup.write("\(pid)", to: "cgroup.procs") else {
            rmdir(path)
            return nil
        }
        return cgroup
    }

    /// Once per host: removes the empty cgroups of hosts that are gone (a worker the host
    /// never reaped, such as the waiting one at exit, leaves its cgroup behind).
    private static let staleRemoved: Void = {
        guard let hostFolder, let names = try? FileManager.default.contentsOfDirectory(atPath: hostFolder) else { return }
        for name in names where name.hasPrefix("berth-") {
            guard let host = name.dropFirst(6).split(separator: "-").first.flatMap({ Int32($0) }),
                  host != getpid(), Glibc.kill(host, 0) != 0, errno == ESRCH else { continue }
            rmdir(hostFolder + "/" + name)
        }
    }()

    /// Kills every process in it (`cgroup.kill`, Linux 5.14); false when the kernel has no such file.
    @discardableResult
    func killAll() -> Bool {
        write("1", to: "cgroup.kill")
    }

    /// Removes the cgroup once its processes are gone; the kill above is asynchronous, so
    /// it waits briefly for the last of them to exit. An empty cgroup left behind is harmless.
    func remove() {
        for _ in 0..<200 {
            if rmdir(path) == 0 || errno == ENOENT { return }
            usleep(1_000)
        }
    }

    private func write(_ text: String, to file: String) -> Bool {
        let descriptor = open(path + "/" + file, O_WRONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        return Glibc.write(descriptor, text, text.utf8.count) == text.utf8.count
    }
}
