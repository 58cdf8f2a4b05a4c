import BerthCore
internal import Glibc
private import CBerthSystem

/// The worker confining itself (Docs/security.md), in this order: the OOM killer's
/// preference; a user namespace of its own; a PID namespace of its own (the process the
/// host spawned waits outside it and ends as the worker ends, `berth_enter_pid_namespace`);
/// its limits (`WorkerLimits`: cgroups, rlimits);
/// IPC, network (unless `network`; the host's shared empty one, `SharedNetworkNamespace`,
/// where it has one) and mount namespaces with a root of its own holding only
/// what it needs (`berth_make_root`); no_new_privs; every capability dropped (the bounding
/// set cleared and securebits locked); a Landlock ruleset (read the system's library
/// folders, the Swift runtime, the worker executable and the policy's read paths; write
/// only the policy's write paths; execute nothing, make no device node; TCP only with
/// `network`); then the allowlist system-call filter (the host's program of the table in
/// seccomp_policy.c, `berth_seccomp_install`), whose refusals a thread reports to the host
/// (`RefusedCallReporter`).
/// Runs before the plugin's library is opened, because its constructors run inside
/// `dlopen`; the libraries the worker itself links are mapped already. What could not be
/// made here is named in the status it returns (`SandboxStatus.enforced`'s `missing`).
enum WorkerSandbox {
    /// Where a failed confinement stops the load.
    struct Failure: Error {
        var message: String
    }

    /// The host's shared network namespace (`--network-namespace`, `SharedNetworkNamespace`):
    /// descriptors of its user namespace and of itself, until confining joins or closes them.
    nonisolated(unsafe) static var sharedNetwork: (user: Int32, network: Int32)?

    /// Closes the shared network namespace's descriptors: no plugin code finds them open.
    static func closeSharedNetwork() {
        guard let shared = sharedNetwork else { return }
        sharedNetwork = nil
        close(shared.user)
        close(shared.network)
    }

    /// Library folders every worker reads (those that exist).
    static let systemReadPaths = ["/lib", "/lib64", "/usr/lib", "/usr/lib64", "/usr/local/lib", "/etc/ld.so.cache", "/dev/null", "/dev/urandom"]

    /// How much more the OOM killer prefers a worker than an ordinary process (the host):
    /// a plugin that eats the machine's memory is killed before its host.
    static let outOfMemoryScoreAdjustment: Int32 = 800

    /// Confines this process by `policy`. Namespaces, Landlock and the filter need a process
    /// of one thread (or bind only the calling thread), so all are refused while another runs.
    static func apply(_ policy: SandboxPolicy) throws(Failure) -> SandboxStatus {
        for (name, value) in policy.environment { setenv(name, value, 1) }
        setenv("BERTH_PLUGIN_DATA", policy.dataFolder, 1)
        let threads = berth_thread_count()
        guard threads == 1 else {
            throw Failure(message: "cannot confine the worker: \(threads) threads run already, and namespaces, Landlock and seccomp need one")
        }
        // Written while /proc/self is still writable; failing only costs the preference.
        _ = berth_set_oom_score_adjustment(outOfMemoryScoreAdjustment)
        var missing: [String] = []
        // Without `network`: the host's one empty network namespace, joined before the user
        // namespace of its own is made (as its child), instead of a new one.
        var joinedNetwork = false
        if let shared = sharedNetwork, !policy.network {
            joinedNetwork = berth_join_network_namespace(shared.user, shared.network) == 0
        }
        closeSharedNetwork()
        let userNamespace = berth_enter_user_namespace()
        if userNamespace != 0 { missing.append("no user namespace (\(errnoText(userNamespace)))") }
        // From here on this is the process in the new PID namespace (pid_namespace.c): the one
        // the host spawned waits outside it, and its init is PID 1.
        var reason = [CChar](repeating: 0, count: 256)
        let pidNamespace = berth_enter_pid_namespace(&reason, reason.count)
        guard pidNamespace >= 0 else { throw Failure(message: "cannot start the worker in its PID namespace: \(text(reason))") }
        if pidNamespace != 0 {
            missing.append("no PID namespace (\(text(reason))): other processes are kept out by the filter's own-pid rules and Landlock's /proc grant alone")
        }
        missing += try WorkerLimits.apply(policy, ownUserNamespace: userNamespace == 0, helperProcesses: pidNamespace == 0 ? 2 : 0)
        missing += try enterNamespaces(policy, mountNamespaceMade: pidNamespace == 0, networkJoined: joinedNetwork)
        let noNewPrivileges = berth_set_no_new_privs()
        guard noNewPrivileges == 0 else { throw Failure(message: "prctl(PR_SET_NO_NEW_PRIVS) failed: \(errnoText(noNewPrivileges))") }
        let dropped = berth_drop_capabilities()
        guard dropped == 0 else { throw Failure(message: "cannot drop the worker's capabilities: \(errnoText(dropped))") }
        var status = try restrictFiles(policy)
        let refusals = try loadFilter(policy.systemCallFilter)
        // The old root's detach (a thread since berth_make_root) overlapped the steps above.
        var detach = [CChar](repeating: 0, count: 256)
        guard berth_root_settled(&detach, detach.count) == 0 else { throw Failure(message: "cannot make the worker's root: \(text(detach))") }
        if refusals >= 0 { RefusedCallReporter.start(reading: refusals) }
        if case .enforced(let abi, _) = status, !missing.isEmpty {
            status = .enforced(landlockABI: abi, missing: missing.joined(separator: "; "))
        }
        return status
    }

    /// Loads the host's filter program with this process's pid in it, after the SIGSYS
    /// handler when its refusals trap (x86-64; elsewhere the filter answers EPERM itself and
    /// nothing is reported). The read end of the refusals' pipe, or -1 when they do not trap.
    private static func loadFilter(_ filter: SystemCallFilterProgram?) throws(Failure) -> Int32 {
        guard let filter else { throw Failure(message: "the hello carries no system-call filter") }
        let refusals = filter.trapped ? berth_seccomp_trap_install() : -1
        if filter.trapped, refusals < 0 {
            throw Failure(message: "cannot install the SIGSYS handler for the filter's refusals: \(errnoText(errno))")
        }
        var message = [CChar](repeating: 0, count: 256)
        let loaded = filter.instructions.withUnsafeBufferPointer { instructions in
            filter.selfSlots.withUnsafeBufferPointer { slots in
                berth_seccomp_install(instructions.baseAddress, instructions.count, slots.baseAddress, slots.count, &message, message.count)
            }
        }
        guard loaded == 0 else { throw Failure(message: "cannot load the system-call filter: \(text(message))") }
        return refusals
    }

    /// IPC, network (unless `network`; the host's shared empty one, `SharedNetworkNamespace`,
/// where it has one) and mount namespaces, and the root of its own; what
    /// could not be made, one phrase each. A root that fails half-way stops the load.
    /// `mountNamespaceMade`: the PID namespace's step made the mount namespace already;
    /// `networkJoined`: the worker is in the host's shared network namespace already.
    private static func enterNamespaces(_ policy: SandboxPolicy, mountNamespaceMade: Bool, networkJoined: Bool) throws(Failure) -> [String] {
        var missing: [String] = []
        let kinds: [(Int32, String)] = [(Int32(BERTH_NAMESPACE_IPC), "IPC"), (Int32(BERTH_NAMESPACE_NETWORK), "network")]
            .filter { !((policy.network || networkJoined) && $0.1 == "network") }
        for (kind, name) in kinds {
            let status = berth_enter_namespace(kind)
            if status != 0 { missing.append("no \(name) namespace (\(errnoText(status)))") }
        }
        let mountNamespace = mountNamespaceMade ? 0 : berth_enter_namespace(Int32(BERTH_NAMESPACE_MOUNT))
        guard mountNamespace == 0 else {
            return missing + ["no mount namespace (\(errnoText(mountNamespace))): files outside the grants are kept by Landlock alone"]
        }
        // The device files are bound by berth_make_root itself; a grant beneath /dev (a
        // runtime folder in /dev/shm) is bound like any other.
        let reads = systemReadPaths.filter { !$0.hasPrefix("/dev/") } + runtimeReadPathsFound + policy.readPaths
        // A folder nested in another is bound after it, or the outer bind would hide it.
        let binds = (reads.map { ($0, Int32(0)) } + policy.writePaths.map { ($0, Int32(1)) })
            .sorted { $0.0.split(separator: "/").count < $1.0.split(separator: "/").count }
        var message = [CChar](repeating: 0, count: 512)
        let paths = binds.map { strdup($0.0) }
        defer { paths.forEach { free($0) } }
        let made = paths.map { UnsafePointer($0) }.withUnsafeBufferPointer { pointers in
            binds.map(\.1).withUnsafeBufferPointer { writable in
                berth_make_root(pointers.baseAddress, writable.baseAddress, binds.count, &message, message.count)
            }
        }
        guard made == 0 else { throw Failure(message: "cannot make the worker's root: \(text(message))") }
        return missing
    }

    private static func text(_ message: [CChar]) -> String {
        String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The Landlock part: `.unavailable` when the kernel has none.
    private static func restrictFiles(_ policy: SandboxPolicy) throws(Failure) -> SandboxStatus {
        let abi = berth_landlock_abi()
        guard abi > 0 else {
            return .unavailable(landlockErrno: -abi)
        }
        let ruleset = berth_landlock_create(abi, policy.network ? 0 : 1)
        guard ruleset >= 0 else { throw Failure(message: "landlock_create_ruleset failed: \(errnoText(-ruleset))") }
        let rules = (systemReadPaths + runtimeReadPathsFound + [ownProcFolder] + policy.readPaths).map { ($0, Int32(BERTH_SANDBOX_READ)) }
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

    /// The Swift runtime's folder and this executable, found once from what is mapped (the
    /// root and Landlock both need them).
    private static let runtimeReadPathsFound = runtimeReadPaths()

    private static func runtimeReadPaths() -> [String] {
        var paths: [String] = []
        if let file = berth_image_path_of_symbol("swift_retain") {
            paths.append(ParentPath.of(String(cString: file)))
        }
        if let executable = SystemFile.linkTarget("/proc/self/exe") {
            paths.append(executable)
        }
        return paths
    }

    static func errnoText(_ code: Int32) -> String {
        String(cString: strerror(code))
    }
}
