import BerthCore
internal import Glibc
private import CBerthSystem

/// The limits a worker sets on itself while it confines itself (Docs/worker-limits.md),
/// before any plugin code runs, so the plugin finds them in force and cannot reach them:
/// - memory (shared memory included), threads and processor time in the cgroups the host
///   made for it and moved it into (cgroup v1's `memory`, `pids` and `cpu`, or v2 where its
///   group has those controllers; none when the host made none: then it is still in the
///   host's groups); the files lie outside everything its sandbox can open afterwards;
/// - RLIMIT_DATA (memory) and RLIMIT_FSIZE (no file in its data folder, or anywhere, grows
///   past `limits.disk`; SIGXFSZ ignored, so the write fails with EFBIG);
/// - RLIMIT_NPROC (threads) in a user namespace of its own, where it counts only the
///   worker's threads.
enum WorkerLimits {
    /// What the worker could not enforce, one phrase each ("processor time (no writable cgroup)").
    /// `helperProcesses`: processes of the worker's that are not the plugin's (the waiter and
    /// init of its PID namespace), counted by the pids cgroup and RLIMIT_NPROC alike, so the
    /// plugin still gets `threads` of its own.
    static func apply(_ policy: SandboxPolicy, ownUserNamespace: Bool, helperProcesses: UInt32 = 0) throws(WorkerSandbox.Failure) -> [String] {
        var unenforced: [String] = []
        if policy.memoryLimit > 0 {
            let limited = berth_set_memory_limit(policy.memoryLimit)
            guard limited == 0 else { throw WorkerSandbox.Failure(message: "setrlimit(RLIMIT_DATA, \(policy.memoryLimit)) failed: \(WorkerSandbox.errnoText(limited))") }
        }
        let fileSize = berth_set_file_size_limit(policy.diskLimit)
        guard fileSize == 0 else {
            throw WorkerSandbox.Failure(message: "setrlimit(RLIMIT_FSIZE, \(policy.diskLimit)) failed: \(WorkerSandbox.errnoText(fileSize))")
        }
        let cgroups = CgroupFiles.own(policy.cgroups)
        let memory = policy.memoryLimit > 0 ? cgroups.write(memory: policy.memoryLimit) : true
        if !memory { unenforced.append("shared memory beyond RLIMIT_DATA (no writable memory cgroup; shared anonymous mappings are refused by the filter)") }
        let threadLimit = policy.threadLimit + helperProcesses
        var threads = cgroups.write(threads: threadLimit)
        if !threads, ownUserNamespace {
            threads = berth_set_thread_limit(UInt64(threadLimit)) == 0
        }
        if !threads { unenforced.append("threads (no writable pids cgroup, no user namespace)") }
        if !cgroups.write(cpuPercent: policy.cpuPercent) { unenforced.append("processor time (no writable cpu cgroup)") }
        return unenforced
    }
}

/// The worker's own cgroup files for its limits, v1 or v2.
private struct CgroupFiles {
    var version1: [String: String]
    var version2: String?

    /// The folders the host made for this worker and moved it into (`made`), and no others:
    /// a worker the host could not move is still in its host's groups, and a limit written
    /// there would bound the host and everything beside it.
    static func own(_ made: CgroupFolders?) -> CgroupFiles {
        guard let made else { return CgroupFiles(version1: [:], version2: nil) }
        var version2 = made.version2
        // A v2 group without the controllers (a hybrid machine binds them to v1) limits nothing.
        if let folder = version2, (SystemFile.text(folder + "/cgroup.controllers"))?.isEmpty ?? true {
            version2 = nil
        }
        return CgroupFiles(version1: made.version1, version2: version2)
    }

    func write(memory bytes: UInt64) -> Bool {
        write("memory", v1: "memory.limit_in_bytes", v2: "memory.max", "\(bytes)")
    }

    func write(threads: UInt32) -> Bool {
        write("pids", v1: "pids.max", v2: "pids.max", "\(threads)")
    }

    func write(cpuPercent: UInt32) -> Bool {
        let period = 100_000
        let quota = Int(cpuPercent) * period / 100
        if let folder = version1["cpu"] {
            return Self.put("\(period)", folder + "/cpu.cfs_period_us") && Self.put("\(quota)", folder + "/cpu.cfs_quota_us")
        }
        return version2.map { Self.put("\(quota) \(period)", $0 + "/cpu.max") } ?? false
    }

    private func write(_ controller: String, v1: String, v2: String, _ value: String) -> Bool {
        if let folder = version1[controller] { return Self.put(value, folder + "/" + v1) }
        return version2.map { Self.put(value, $0 + "/" + v2) } ?? false
    }

    private static func put(_ text: String, _ file: String) -> Bool {
        let descriptor = open(file, O_WRONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        return Glibc.write(descriptor, text, text.utf8.count) == text.utf8.count
    }
}
