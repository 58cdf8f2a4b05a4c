internal import Glibc

/// A worker's own cgroup folders as the host made them (`WorkerCgroup`), sent in its sandbox
/// policy so the worker need not find them in `/proc/self/mountinfo` while it confines itself.
package struct CgroupFolders: Sendable, Equatable {
    /// Its group in the cgroup2 file system, if any.
    package var version2: String?
    /// Its groups in cgroup v1's `memory`, `pids` and `cpu` hierarchies, by controller.
    package var version1: [String: String]

    package init(version2: String?, version1: [String: String]) {
        self.version2 = version2
        self.version1 = version1
    }

    package func write(to writer: inout WireWriter) {
        writer.string(version2 ?? "")
        writer.list(version1.sorted { $0.key < $1.key }) { $0.string($1.key); $0.string($1.value) }
    }

    package static func read(from reader: inout WireReader) throws(WireDecodingError) -> CgroupFolders {
        let version2 = try reader.string()
        let version1 = try reader.list(minimumElementSize: 8) { reader throws(WireDecodingError) in (try reader.string(), try reader.string()) }
        return CgroupFolders(version2: version2.isEmpty ? nil : version2, version1: Dictionary(version1) { first, _ in first })
    }
}

/// Where this process's cgroups are mounted writable: what the host's `WorkerCgroup`
/// makes groups beside, and what a worker writes its own limits into (`WorkerLimits`).
package enum CgroupMounts {
    /// The v1 controllers a worker's limits use.
    package static let limitControllers = ["memory", "pids", "cpu"]

    /// The folder of this process's own group in each writable v1 hierarchy of `limitControllers`
    /// (the host's in the host, the worker's in a worker).
    package static let ownControllerFolders: [String: String] = {
        guard let membership = SystemFile.text("/proc/self/cgroup"),
              let mounts = SystemFile.text("/proc/self/mountinfo") else { return [:] }
        var folders: [String: String] = [:]
        for line in membership.split(separator: "\n") {
            // "ID:CONTROLLERS:PATH"
            let parts = line.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false)
            guard parts.count == 3 else { continue }
            for controller in parts[1].split(separator: ",").map(String.init) where limitControllers.contains(controller) {
                guard let folder = mountFolder(type: "cgroup", option: controller, own: String(parts[2]), mounts: mounts) else { continue }
                folders[controller] = folder
            }
        }
        return folders
    }()

    /// The folder of the host's own cgroup in a writable cgroup2 mount; nil without one.
    package static let hostFolder: String? = {
        guard let membership = SystemFile.text("/proc/self/cgroup"),
              let line = membership.split(separator: "\n").first(where: { $0.hasPrefix("0::") }),
              let mounts = SystemFile.text("/proc/self/mountinfo") else { return nil }
        return mountFolder(type: "cgroup2", option: nil, own: String(line.dropFirst(3)), mounts: mounts)
    }()

    /// The writable folder of group `own` in the mount of `type` (with super-option `option`), or nil.
    private static func mountFolder(type: String, option: String?, own: String, mounts: String) -> String? {
        for mount in mounts.split(separator: "\n") {
            // "ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS… - TYPE SOURCE SUPER-OPTIONS"
            let halves = mount.split(separator: " - ", omittingEmptySubsequences: false)
            let fields = halves[0].split(separator: " ")
            guard halves.count == 2, halves[1].hasPrefix(type + " "), fields.count >= 6, fields[5].hasPrefix("rw") else { continue }
            if let option, !(halves[1].split(separator: " ").last?.split(separator: ",").contains { $0 == option } ?? false) { continue }
            let root = String(fields[3])
            guard own == root || own.hasPrefix(root == "/" ? "/" : root + "/") else { continue }
            let folder = String(fields[4]) + (root == "/" ? own : String(own.dropFirst(root.count)))
            return access(folder, W_OK) == 0 ? (folder.hasSuffix("/") ? String(folder.dropLast()) : folder) : nil
        }
        return nil
    }
}
