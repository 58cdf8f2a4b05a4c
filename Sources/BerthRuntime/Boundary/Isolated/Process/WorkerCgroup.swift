@_spi(Engine) import BerthCore
import Foundation

/// A worker's own cgroup (v2), beside the host's: everything the worker starts is in it,
/// whatever session or process group it makes, and `cgroup.kill` ends them all at once
/// (Docs/security.md). Made when the host may create cgroups next to its own (root, or a
/// delegated subtree such as a systemd user service); elsewhere a worker has none and the
/// host relies on the filter (no fork) and its process-group kill. Where cgroup v1's
/// `memory`, `pids` and `cpu` controllers are mounted and writable, the worker also gets a
/// group of its own in each (`controllerFolders`), whose limits it writes while it confines
/// itself (Docs/worker-limits.md).
///
/// The worker is moved in right after `posix_spawn`, before the host sends its hello: no
/// plugin code has run by then, so nothing it starts can be left outside.
package final class WorkerCgroup: Sendable {
    /// Its folder in the cgroup2 file system; nil where only v1 controllers could be made.
    package let path: String?
    /// Its folders in cgroup v1's `memory`, `pids` and `cpu` hierarchies, by controller.
    package let controllerFolders: [String: String]

    private init(path: String?, controllerFolders: [String: String]) {
        self.path = path
        self.controllerFolders = controllerFolders
    }

    /// Its folders as a worker's sandbox policy carries them.
    package var folders: CgroupFolders { CgroupFolders(version2: path, version1: controllerFolders) }

    static var limitControllers: [String] { CgroupMounts.limitControllers }
    package static var ownControllerFolders: [String: String] { CgroupMounts.ownControllerFolders }
    package static var hostFolder: String? { CgroupMounts.hostFolder }

    /// Whether workers get cgroups of their own here.
    package static var isAvailable: Bool { hostFolder != nil }

    /// A new cgroup beside the host's, with `pid` moved into it, and one in each writable v1
    /// hierarchy of `limitControllers`; nil when none can be made.
    static func make(for pid: Int32) -> WorkerCgroup? {
        _ = staleRemoved
        let name = "berth-\(getpid())-worker-\(pid)"
        func enter(_ parent: String) -> String? {
            let folder = parent + "/" + name
            guard mkdir(folder, 0o755) == 0 || errno == EEXIST else { return nil }
            guard write("\(pid)", to: folder + "/cgroup.procs") else {
                rmdir(folder)
                return nil
            }
            return folder
        }
        let path = hostFolder.flatMap(enter)
        let controllers = ownControllerFolders.compactMapValues(enter)
        guard path != nil || !controllers.isEmpty else { return nil }
        return WorkerCgroup(path: path, controllerFolders: controllers)
    }

    /// Once per host: removes the empty cgroups of hosts that are gone (a worker the host
    /// never reaped, such as the waiting one at exit, leaves its cgroup behind).
    private static let staleRemoved: Void = {
        for parent in [hostFolder].compactMap({ $0 }) + ownControllerFolders.values {
            guard let names = try? FileManager.default.contentsOfDirectory(atPath: parent) else { continue }
            for name in names where name.hasPrefix("berth-") {
                guard let host = name.dropFirst(6).split(separator: "-").first.flatMap({ Int32($0) }),
                      host != getpid(), Glibc.kill(host, 0) != 0, errno == ESRCH else { continue }
                rmdir(parent + "/" + name)
            }
        }
    }()

    /// Kills every process in it (`cgroup.kill`, Linux 5.14); false when the kernel has no such file.
    @discardableResult
    func killAll() -> Bool {
        guard let path else { return false }
        return Self.write("1", to: path + "/cgroup.kill")
    }

    /// Removes the cgroups once their processes are gone. The kill above is asynchronous, and
    /// a sandboxed worker's init ends after the process the host reaps (Docs/worker-sandbox.md):
    /// a cgroup still busy is removed in the background, retried for up to 200 ms, so the
    /// reaper does not wait for it. An empty cgroup left behind is harmless (and a later host
    /// removes it: `staleRemoved`).
    func remove() {
        let busy = ([path].compactMap { $0 } + controllerFolders.values).filter { rmdir($0) != 0 && errno != ENOENT }
        guard !busy.isEmpty else { return }
        DispatchQueue.global(qos: .utility).async {
            for folder in busy {
                for _ in 0..<200 {
                    usleep(1_000)
                    if rmdir(folder) == 0 || errno == ENOENT { break }
                }
            }
        }
    }

    /// What the worker uses now against its limits, from its v1 groups: memory (shared
    /// memory included) in bytes and tasks (threads); nil where it has no such group.
    package var usage: (memoryBytes: UInt64?, tasks: UInt64?) {
        func number(_ controller: String, _ file: String) -> UInt64? {
            guard let folder = controllerFolders[controller],
                  let text = try? String(contentsOfFile: folder + "/" + file, encoding: .utf8) else { return nil }
            return UInt64(text.trimmingCharacters(in: .whitespacesAndNewlines))
        }
        return (number("memory", "memory.usage_in_bytes"), number("pids", "pids.current"))
    }

    private static func write(_ text: String, to file: String) -> Bool {
        let descriptor = open(file, O_WRONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        return Glibc.write(descriptor, text, text.utf8.count) == text.utf8.count
    }
}
