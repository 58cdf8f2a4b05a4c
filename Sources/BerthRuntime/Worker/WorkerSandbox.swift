import Foundation
private import CBerthSystem

/// The worker confining itself (Docs/security.md), in this order: the OOM killer's
/// preference, no_new_privs, every capability dropped (the bounding set cleared and
/// securebits locked when started as root), the memory limit, a Landlock ruleset (read the
/// system's library folders, the Swift runtime, the worker executable and the policy's
/// read paths; write only the policy's write paths; execute nothing, make no device node;
/// TCP only with `network`), then the system-call filter (`berth_seccomp_confine`), whose
/// refusals a thread reports to the host (`RefusedCallReporter`). Runs
/// before the plugin's library is opened, because its constructors run inside `dlopen`;
/// the libraries the worker itself links are mapped already.
enum WorkerSandbox {
    /// Where a failed confinement stops the load.
    struct Failure: Error {
        var message: String
    }

    /// Library folders every worker reads (those that exist).
    static let systemReadPaths = ["/lib", "/lib64", "/usr/lib", "/usr/lib64", "/usr/local/lib", "/etc/ld.so.cache", "/dev/null", "/dev/urandom"]

    /// How much more the OOM killer prefers a worker than an ordinary process (the host):
    /// a plugin that eats the machine's memory is killed before its host.
    static let outOfMemoryScoreAdjustment: Int32 = 800

    /// Confines this process by `policy`. Landlock and the filter restrict the calling
    /// thread and the threads it starts later, so both are refused while another thread runs.
    static func apply(_ policy: SandboxPolicy) throws(Failure) -> SandboxStatus {
        for (name, value) in policy.environment { setenv(name, value, 1) }
        setenv("BERTH_PLUGIN_DATA", policy.dataFolder, 1)
        let threads = berth_thread_count()
        guard threads == 1 else {
            throw Failure(message: "cannot confine the worker: \(threads) threads run already, and Landlock and seccomp bind only the calling thread")
        }
        // Written while /proc/self is still writable; failing only costs the preference.
        _ = berth_set_oom_score_adjustment(outOfMemoryScoreAdjustment)
        let noNewPrivileges = berth_set_no_new_privs()
        guard noNewPrivileges == 0 else { throw Failure(message: "prctl(PR_SET_NO_NEW_PRIVS) failed: \(errnoText(noNewPrivileges))") }
        let dropped = berth_drop_capabilities()
        guard dropped == 0 else { throw Failure(message: "cannot drop the worker's capabilities: \(errnoText(dropped))") }
        if policy.memoryLimit > 0 {
            let limited = berth_set_memory_limit(policy.memoryLimit)
            guard limited == 0 else { throw Failure(message: "setrlimit(RLIMIT_DATA, \(policy.memoryLimit)) failed: \(errnoText(limited))") }
        }
        let status = try restrictFiles(policy)
        // Off x86_64 there is no handler: the filter itself answers EPERM, and nothing is reported.
        let refusals = berth_seccomp_trap_install()
        var message = [CChar](repeating: 0, count: 256)
        guard berth_seccomp_confine(policy.network ? 1 : 0, refusals >= 0 ? 1 : 0, &message, message.count) == 0 else {
            throw Failure(message: "cannot load the system-call filter: \(String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self))")
        }
        if refusals >= 0 { RefusedCallReporter.start(reading: refusals) }
        return status
    }

    /// The Landlock part: `.unavailable` when the kernel has none.
    private static func restrictFiles(_ policy: SandboxPolicy) throws(Failure) -> SandboxStatus {
        let abi = berth_landlock_abi()
        guard abi > 0 else {
            return .unavailable(landlockErrno: -abi)
        }
        let ruleset = berth_landlock_create(abi, policy.network ? 0 : 1)
        guard ruleset >= 0 else { throw Failure(message: "landlock_create_ruleset failed: \(errnoText(-ruleset))") }
        let rules = (systemReadPaths + runtimeReadPaths() + [ownProcFolder] + policy.readPaths).map { ($0, Int32(BERTH_SANDBOX_READ)) }
            + policy.writePaths.map { ($0, Int32(BERTH_SANDBOX_READ_WRITE)) }
        for (path, kind) in rules {
            let status = berth_landlock_allow(ruleset, abi, path, kind)
            // A path that does not exist is simply not granted.
            guard status == 0 || status == ENOENT else {
                close(ruleset)
                throw Failure(message: "landlock_add_rule for \(path) failed: \(errnoText(status))")
            }
        }
        let enforced = berth_landlock_enforce(ruleset)
        guard enforced == 0 else { throw Failure(message: "landlock_restrict_self failed: \(errnoText(enforced))") }
        return .enforced(landlockABI: abi)
    }

    /// The worker's own `/proc/<pid>`, read-only: its threads, maps and status, and where
    /// berth-worker's open(2) (CBerthWorkerProc) sends libdispatch's reads of
    /// `/proc/<tid>/stat`. Nothing else of `/proc` is granted, so other processes'
    /// entries, the host's included, stay closed.
    private static var ownProcFolder: String { "/proc/\(getpid())" }

    /// The Swift runtime's folder and this executable, found from what is mapped now.
    private static func runtimeReadPaths() -> [String] {
        var paths: [String] = []
        if let file = berth_image_path_of_symbol("swift_retain") {
            paths.append(ParentPath.of(String(cString: file)))
        }
        if let executable = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe") {
            paths.append(executable)
        }
        return paths
    }

    private static func errnoText(_ code: Int32) -> String {
        String(cString: strerror(code))
    }
}
