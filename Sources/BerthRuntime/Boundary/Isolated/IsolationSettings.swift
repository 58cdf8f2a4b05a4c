@_spi(Engine) import BerthCore
import Foundation

/// How a host runs plugins: which mode each one gets, and how it treats a worker that
/// crashes or hangs.
public struct IsolationSettings: Sendable, Equatable {
    /// Which mode each plugin runs in.
    public enum Policy: Sendable, Equatable {
        /// The manifest's `isolation`; `default` for a manifest without the field.
        case manifest(default: IsolationMode)
        /// One mode for every plugin, whatever its manifest says.
        case always(IsolationMode)
    }

    /// Which mode each plugin runs in.
    public var policy: Policy
    /// A call a worker has not answered in this long kills it (`--unresponsive-ms`).
    public var unresponsiveAfter: Duration
    /// A contract call its provider has not answered in this long fails as timed out
    /// (a worker provider is then killed as unresponsive); 10 s by default.
    public var serviceCallTimeout: Duration = .seconds(10)
    /// This many crashes within `crashWindow` mark a plugin failed until it is loaded again.
    public var crashLimit: Int
    /// The window `crashLimit` counts crashes in.
    public var crashWindow: Duration
    /// The `berth-worker` executable; nil looks beside the running executable.
    public var workerExecutable: String?
    /// Load every new in-process generation in a throwaway worker first (constructors,
    /// entry, handshake, one create/destroy), so code that crashes at load time is refused
    /// before it is mapped into the host.
    public var canary: Bool
    /// Keep one worker started ahead of need, so a load, reload, respawn or canary does not
    /// wait for a process to start (`WorkerPool`). For long-lived hosts (`berth run`); a
    /// one-shot command would only start a worker it never uses.
    public var keepWorkerReady: Bool
    /// The most memory each worker may take, in bytes (`--max-plugin-memory`; 0: no
    /// limit). Docs/security.md says what it counts.
    public var maxPluginMemory: UInt64 = SandboxPolicy.defaultMemoryLimit
    /// Whether each worker confines itself (Docs/security.md: Landlock, the system-call
    /// filter, the memory limit, no capabilities). Off only to measure what the sandbox costs
    /// (Docs/benchmarks.md) or to tell a sandbox refusal from a plugin's own bug: an
    /// unconfined worker can do whatever the host's user can.
    public var confinesWorkers = true

    /// Settings with each field as given; the defaults follow each manifest (a worker process without the field, as `berth run`), allow three crashes in five minutes, and try new in-process generations in a worker first.
    public init(policy: Policy = .manifest(default: .process), unresponsiveAfter: Duration = .seconds(3),
                crashLimit: Int = 3, crashWindow: Duration = .seconds(300), workerExecutable: String? = nil, canary: Bool = true,
                keepWorkerReady: Bool = false) {
        self.canary = canary
        self.keepWorkerReady = keepWorkerReady
        self.policy = policy
        self.unresponsiveAfter = unresponsiveAfter
        self.crashLimit = crashLimit
        self.crashWindow = crashWindow
        self.workerExecutable = workerExecutable
    }

    /// The mode `manifest` runs in under this policy.
    package func mode(for manifest: PluginManifest) -> IsolationMode {
        switch policy {
        case .always(let mode): mode
        case .manifest(let fallback): manifest.isolation ?? fallback
        }
    }

    /// The worker executable to start (`WorkerProcess.locateExecutable` when none is set); when
    /// none is found, the path an error names: `$BERTH_WORKER` as set, else `berth-worker`.
    var resolvedWorkerExecutable: String {
        if let workerExecutable { return workerExecutable }
        if let found = WorkerProcess.locateExecutable() { return found }
        let named = ProcessInfo.processInfo.environment["BERTH_WORKER"] ?? ""
        return named.isEmpty ? "berth-worker" : named
    }
}

/// A plugin's recent crashes, against the budget that marks it failed.
struct CrashRecord: Sendable {
    private(set) var times: [ContinuousClock.Instant] = []

    /// Records a crash now; true when the budget is spent.
    mutating func record(limit: Int, window: Duration, now: ContinuousClock.Instant = .now) -> Bool {
        times.append(now)
        times.removeAll { now - $0 > window }
        return times.count >= limit
    }

    mutating func reset() {
        times.removeAll()
    }
}
