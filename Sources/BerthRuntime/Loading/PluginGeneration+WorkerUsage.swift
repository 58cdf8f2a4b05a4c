@_spi(Engine) import BerthCore
import Foundation

/// What an isolated plugin's worker uses against its limits (Docs/worker-limits.md), as
/// `status` and the inspector show it.
public struct WorkerUsage: Sendable, Equatable {
    /// Memory in use (its cgroup's count, shared memory included; else its resident set), bytes.
    public var memoryBytes: UInt64?
    /// Its memory limit in bytes (0: none).
    public var memoryLimit: UInt64
    /// Threads running (its cgroup's tasks; else its own threads).
    public var threads: UInt64?
    /// Its thread limit.
    public var threadLimit: UInt32
    /// Its processor share in hundredths of a core.
    public var cpuPercent: UInt32
    /// Its data folder's quota in bytes (per file).
    public var diskLimit: UInt64

    /// "memory 12.5 of 1024 MiB · threads 7 of 256 · cpu ≤ 1.00 cores · disk ≤ 1024 MiB per file".
    public var text: String {
        let mebibytes = { (bytes: UInt64) in String(format: "%.1f", Double(bytes) / 1_048_576) }
        let memory = memoryBytes.map(mebibytes) ?? "?"
        let memoryLimitText = memoryLimit == 0 ? "no limit" : "\(memoryLimit >> 20) MiB"
        return "memory \(memory) of \(memoryLimitText) · threads \(threads.map(String.init) ?? "?") of \(threadLimit)"
            + " · cpu ≤ \(String(format: "%.2f", Double(cpuPercent) / 100)) cores · disk ≤ \(diskLimit >> 20) MiB per file"
    }
}

extension PluginGeneration {
    /// What its worker's sandbox lacks on this machine, in one line ("no user namespace
    /// (…)"; Landlock missing), or nil when the whole wall stands (and in process).
    package var workerSandboxGaps: String? { (connection as? IsolatedPlugin)?.sandbox.unconfinedBecause }

    /// Its worker's use against its limits, memory capped by `hostMemoryCeiling` (the host's
    /// `IsolationSettings.maxPluginMemory`, 1 GiB by default); nil in process (nothing is limited there).
    package func workerUsage(hostMemoryCeiling: UInt64 = 1 << 30) -> WorkerUsage? {
        guard let pid = workerPluginPID else { return nil }
        let limits = manifest.limits
        let cgroup = (connection as? IsolatedPlugin)?.group.worker.cgroup?.usage
        let status = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
        func field(_ name: String) -> UInt64? {
            status.split(separator: "\n").first { $0.hasPrefix(name + ":") }
                .flatMap { UInt64($0.dropFirst(name.count + 1).trimmingCharacters(in: .whitespaces).split(separator: " ").first ?? "") }
        }
        return WorkerUsage(memoryBytes: cgroup?.memoryBytes ?? field("VmRSS").map { $0 * 1024 }, memoryLimit: limits.memoryLimit(hostCeiling: hostMemoryCeiling),
                           threads: cgroup?.tasks ?? field("Threads"), threadLimit: limits.threads ?? PluginLimits.defaultThreads,
                           cpuPercent: limits.cpuPercent ?? PluginLimits.defaultCPUPercent, diskLimit: limits.disk ?? PluginLimits.defaultDisk)
    }
}
