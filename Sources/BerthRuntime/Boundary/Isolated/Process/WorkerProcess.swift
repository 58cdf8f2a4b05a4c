@_spi(Engine) import BerthCore
import Foundation
private import CBerthSystem

/// A running `berth-worker`, seen from the host: its pid, the host's end of its channel,
/// the tail of its stderr, and how it ended once reaped.
///
/// Spawned with `posix_spawn` (never fork in a multi-threaded Swift process) from one
/// long-lived thread (see `SpawnThread`), with the channel's other end as descriptor 3, its
/// stdout and stderr a pipe read here, stdin `/dev/null`, no other descriptor, a session
/// (and process group) of its own and an environment built from an allowlist
/// (`inheritedEnvironment`), and where the host may make one, a cgroup of its own
/// (`WorkerCgroup`). The worker asks for SIGKILL when the host goes away
/// (PR_SET_PDEATHSIG); the host kills its whole process group, and its cgroup, when it ends it.
package final class WorkerProcess: Sendable {
    /// The worker's process id.
    package let pid: Int32
    /// The host's end of the worker's channel (owned by this object).
    package let channel: IsolationChannel
    /// The executable that was started.
    package let executable: String
    /// Who the worker is for (a plugin id).
    package let plugin: String
    /// Its own cgroup, holding it and everything it starts; nil where the host cannot make one.
    package let cgroup: WorkerCgroup?
    private let standardError: StandardErrorTail
    /// How the worker ended, once reaped.
    private let reaped = Locked<WorkerTermination?>(nil)
    /// Held while the worker is reaped (a blocking `waitid` runs under it), so two threads
    /// never reap the same pid.
    private let reaping = Locked(())
    /// The process the plugin runs in, once found inside the worker's PID namespace.
    private let namespacedPID = Locked<Int32?>(nil)

    private init(pid: Int32, channel: IsolationChannel, executable: String, plugin: String, cgroup: WorkerCgroup?, standardError: StandardErrorTail) {
        self.pid = pid
        self.cgroup = cgroup
        self.channel = channel
        self.executable = executable
        self.plugin = plugin
        self.standardError = standardError
    }

    /// Starts `executable` (see `locateExecutable`) for `plugin`.
    ///
    /// - Parameters:
    ///   - environment: variables set (or replaced) in the worker's environment, which
    ///     otherwise holds only the host's locale and time zone (`inheritedEnvironment`).
    ///   - crashBacktraces: whether the Swift runtime's backtracer runs in the worker
    ///     (`SWIFT_BACKTRACE`, unless `environment` sets it). Off by default: measured here,
    ///     the backtracer catches a SIGSEGV sent with kill, prints a report and lets the
    ///     worker run on, and symbolicating a real crash delays the worker's death; without
    ///     it a crash ends the worker at once with its signal, and "Fatal error: ..." lines
    ///     are still written.
    ///   - standardErrorLines: how many stderr lines `standardErrorTail` keeps.
    ///   - onStandardErrorLine: called with each stderr line, on a reader thread.
    package static func spawn(
        executable: String, plugin: String, environment: [String: String] = [:], crashBacktraces: Bool = false,
        standardErrorLines: Int = 50, onStandardErrorLine: (@Sendable (String) -> Void)? = nil
    ) throws(WorkerSpawnError) -> WorkerProcess {
        guard FileManager.default.isExecutableFile(atPath: executable) else {
            throw WorkerSpawnError(.executableMissing, executable: executable, plugin: plugin)
        }
        let hostEnd: Int32
        let workerEnd: Int32
        do {
            (hostEnd, workerEnd) = try IsolationChannel.makeSocketPair()
        } catch {
            throw WorkerSpawnError(.descriptorsFailed, executable: executable, plugin: plugin, errnoText: error.errnoText)
        }
        var variables = inheritedEnvironment(ProcessInfo.processInfo.environment)
        variables["SWIFT_BACKTRACE"] = crashBacktraces ? "enable=yes" : "enable=no"
        variables.merge(environment) { _, new in new }
        let environmentLines = variables.map { "\($0.key)=\($0.value)" }
        let namespaces = SharedNetworkNamespace.descriptors
        let arguments = [executable, "--fd", "3", "--parent", String(getpid())]
            + (namespaces == nil ? [] : ["--network-namespace", String(SharedNetworkNamespace.firstWorkerDescriptor)])
        let outcome = SpawnThread.shared.run {
            WorkerSpawner.spawn(executable: executable, arguments: arguments, environment: environmentLines, channel: workerEnd,
                                namespaces: namespaces)
        }
        close(workerEnd)
        let spawned: (pid: Int32, standardError: Int32)
        switch outcome {
        case .success(let value):
            spawned = value
        case .failure(let failure):
            close(hostEnd)
            throw WorkerSpawnError(failure.code, executable: executable, plugin: plugin, errnoText: failure.errnoText)
        }
        // Before the hello: no plugin code has run yet, so nothing it starts escapes the cgroup.
        let cgroup = WorkerCgroup.make(for: spawned.pid)
        let tail = StandardErrorTail(descriptor: spawned.standardError, keeping: standardErrorLines, onLine: onStandardErrorLine)
        let channel: IsolationChannel
        do {
            channel = try IsolationChannel(fileDescriptor: hostEnd, peer: plugin)
            channel.callBudget = .worker
        } catch {
            _ = Glibc.kill(spawned.pid, SIGKILL)
            var status: Int32 = 0
            _ = waitpid(spawned.pid, &status, 0)
            cgroup?.remove()
            throw WorkerSpawnError(.descriptorsFailed, executable: executable, plugin: plugin, errnoText: error.errnoText)
        }
        return WorkerProcess(pid: spawned.pid, channel: channel, executable: executable, plugin: plugin, cgroup: cgroup, standardError: tail)
    }

    /// What a worker gets of the host's environment: the locale (`LANG`, `LANGUAGE`,
    /// `LC_*`) and the time zone (`TZ`), nothing else. No token, no socket path
    /// (`XDG_RUNTIME_DIR`, `SSH_AUTH_SOCK`), no `HOME`; the worker sets `BERTH_PLUGIN_DATA`
    /// itself.
    static func inheritedEnvironment(_ host: [String: String]) -> [String: String] {
        host.filter { name, _ in name == "LANG" || name == "LANGUAGE" || name == "TZ" || name.hasPrefix("LC_") }
    }

    deinit {
        // Never leave a zombie or an orphan behind.
        if termination == nil {
            _ = kill()
            _ = waitForExit()
        }
    }

    /// Sends `signal` (SIGKILL unless told otherwise) to the worker's process group: the
    /// worker and anything it started. False once the worker was reaped (its pid may belong
    /// to another process by then) or when `kill` fails.
    @discardableResult
    package func kill(signal: Int32 = SIGKILL) -> Bool {
        guard reaped.withLock({ $0 }) == nil else { return false }
        return Glibc.kill(-pid, signal) == 0 || Glibc.kill(pid, signal) == 0
    }

    /// Blocks until the worker ended, reaps it and returns how; then waits (briefly) for
    /// its stderr to reach end of file so `lastFatalLine` holds its last words.
    package func waitForExit() -> WorkerTermination {
        reaping.withLock { _ in
            if let known = reaped.withLock({ $0 }) { return known }
            var info = siginfo_t()
            while waitid(P_PID, id_t(pid), &info, WEXITED | WNOWAIT) < 0 {
                if errno == EINTR { continue }
                // ECHILD: someone else reaped it; nothing more can be learned.
                return record(.exited(status: -1))
            }
            return reap()
        }
    }

    /// Reaps the worker, which has ended: first its process group and its cgroup are
    /// killed, while the unreaped worker still holds the group's number, so nothing it left
    /// behind runs on (the cgroup also holds what left the group with setsid).
    private func reap() -> WorkerTermination {
        _ = Glibc.kill(-pid, SIGKILL)
        cgroup?.killAll()
        var status: Int32 = 0
        defer { cgroup?.remove() }
        while waitpid(pid, &status, 0) < 0 {
            if errno == EINTR { continue }
            return record(.exited(status: -1))
        }
        return record(WorkerTermination(waitStatus: status))
    }

    /// Waits up to `timeout` for the worker to end; nil when it is still running.
    /// Woken by the worker's pidfd when it ends (an unload waits here for its worker; a 2 ms
    /// poll added up to 2 ms to each), or every 2 ms where there is no pidfd.
    package func waitForExit(timeout: Duration) -> WorkerTermination? {
        let deadline = ContinuousClock.now + timeout
        while true {
            if let ended = termination { return ended }
            let left = deadline - ContinuousClock.now
            if left <= .zero { return nil }
            let milliseconds = Int32(min(left.components.seconds * 1000 + left.components.attoseconds / 1_000_000_000_000_000 + 1, 60_000))
            if berth_wait_for_process_end(pid, milliseconds) < 0 { Thread.sleep(forTimeInterval: 0.002) }
        }
    }

    /// How the worker ended, if it has (reaps it without blocking); nil while it runs.
    package var termination: WorkerTermination? {
        // Another thread reaping now: it records the termination when it has one.
        guard let probed = reaping.withLockIfAvailable({ _ in reapIfEnded() }) else { return reaped.withLock { $0 } }
        return probed
    }

    /// Reaps the worker if it has ended, without blocking; nil while it runs. Called with
    /// `reaping` held.
    private func reapIfEnded() -> WorkerTermination? {
        if let known = reaped.withLock({ $0 }) { return known }
        var info = siginfo_t()
        let result = waitid(P_PID, id_t(pid), &info, WEXITED | WNOHANG | WNOWAIT)
        if result < 0 { return errno == ECHILD ? record(.exited(status: -1)) : nil }
        // WNOHANG: a pid of 0 means it still runs.
        guard info.si_signo == SIGCHLD else { return nil }
        return reap()
    }

    /// The process the plugin's code runs in, by the host's numbering: `pid` itself, or,
    /// once the worker made a PID namespace of its own (Docs/worker-sandbox.md), the child
    /// `pid` started there, while `pid` only waits outside (named `berth-ns-wait`). Its
    /// `/proc` entry is where the worker's memory and processor time are read; signals and
    /// `waitpid` still go to `pid`, which ends as the worker ends.
    package var pluginPID: Int32 {
        if let known = namespacedPID.withLock({ $0 }) { return known }
        // Not by the waiter's name: the worker can answer its hello before the waiter has
        // renamed itself. The worker has the waiter's pid inside the namespace (`clone3`'s
        // `set_tid`); the waiter's other child, the namespace's init, has 1; a worker without
        // the namespace has no such child.
        guard reaped.withLock({ $0 }) == nil,
              let worker = ProcessTable.children(of: pid).first(where: { ProcessTable.innermostPID(of: $0) == pid }) else { return pid }
        namespacedPID.withLock { $0 = worker }
        return worker
    }

    /// The processor time the worker has used so far (user + system, from
    /// `/proc/<pluginPID>/stat`); nil once it was reaped or when that cannot be read.
    package var processorTime: Duration? {
        guard reaped.withLock({ $0 }) == nil,
              let text = try? String(contentsOfFile: "/proc/\(pluginPID)/stat", encoding: .utf8),
              let commandEnd = text.lastIndex(of: ")") else { return nil }
        // After "pid (command) ": state is field 3, utime 14 and stime 15, in clock ticks.
        let fields = text[text.index(after: commandEnd)...].split(separator: " ")
        guard fields.count > 12, let user = UInt64(fields[11]), let system = UInt64(fields[12]) else { return nil }
        let ticksPerSecond = UInt64(max(1, sysconf(Int32(_SC_CLK_TCK))))
        let ticks = user + system
        return .seconds(ticks / ticksPerSecond) + .milliseconds((ticks % ticksPerSecond) * 1000 / ticksPerSecond)
    }

    /// The last lines the worker wrote to stderr, oldest first.
    package var standardErrorTail: [String] { standardError.lastLines }

    /// The worker's last fatal stderr line ("Fatal error: ..."), if it wrote one.
    package var lastFatalLine: String? { standardError.lastFatalLine }

    /// The worker's last Swift fatal error with the stack trace printed after it.
    var lastFatalError: FatalErrorReport? { standardError.lastFatalError }

    private func record(_ ended: WorkerTermination) -> WorkerTermination {
        reaped.withLock { $0 = ended }
        standardError.waitUntilClosed(timeout: .seconds(1))
        return ended
    }
}
