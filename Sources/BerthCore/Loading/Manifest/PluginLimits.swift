/// The manifest's `limits`: what an isolated plugin's worker may take (Docs/worker-limits.md).
/// The host's `--max-plugin-memory` is the default and the ceiling for memory: a manifest may
/// ask for less, never for more. Every limit has a default (nil here).
public struct PluginLimits: Sendable, Equatable {
    /// The most memory the worker may take, shared memory included (its cgroup's memory
    /// limit where the host can make one, and RLIMIT_DATA), in bytes; nil for the host's default.
    public var memory: UInt64?
    /// The most threads the worker may run at once (`pids.max`, or RLIMIT_NPROC in its user
    /// namespace); nil for `defaultThreads`.
    public var threads: UInt32?
    /// The processor time the worker may use, in hundredths of a core (its cgroup's CPU
    /// quota); nil for `defaultCPUPercent`.
    public var cpuPercent: UInt32?
    /// The most bytes its data folder may hold, any one file at most that (RLIMIT_FSIZE);
    /// nil for `defaultDisk`.
    public var disk: UInt64?

    /// Limits as given (nil: the default of each).
    public init(memory: UInt64? = nil, threads: UInt32? = nil, cpuPercent: UInt32? = nil, disk: UInt64? = nil) {
        self.memory = memory
        self.threads = threads
        self.cpuPercent = cpuPercent
        self.disk = disk
    }

    // MARK: What the host holds for the plugin (in both isolation modes)

    /// The most bytes of state (`state_write` slots, over every screen) the host holds for
    /// the plugin: `limits.state`, default 16 MiB.
    public var stateBytes = PluginLimits.defaultStateBytes
    /// The most state slots the host holds for it: `limits.stateSlots`, default 65,536.
    public var stateSlots = PluginLimits.defaultStateSlots
    /// The longest log line the host prints whole: `limits.logLine`, default 16 KiB.
    public var logLineBytes = PluginLimits.defaultLogLineBytes
    /// Log lines a second the host prints (a burst of as many is allowed): `limits.logRate`,
    /// default 100.
    public var logLinesPerSecond = PluginLimits.defaultLogLinesPerSecond

    /// `limits.state` when the manifest has none: 16 MiB.
    public static let defaultStateBytes = 16 << 20
    /// `limits.stateSlots` when the manifest has none: 65,536.
    public static let defaultStateSlots = 65_536
    /// `limits.logLine` when the manifest has none: 16 KiB.
    public static let defaultLogLineBytes = 16 << 10
    /// `limits.logRate` when the manifest has none: 100 lines a second.
    public static let defaultLogLinesPerSecond = 100

    /// The least memory a manifest may ask for: below it the worker's own runtime cannot start.
    public static let minimumMemory: UInt64 = 64 << 20
    /// The least data-folder quota a manifest may ask for.
    public static let minimumDisk: UInt64 = 1 << 20
    /// Threads a manifest may ask for: the worker's own need about 8.
    public static let threadRange = 16...4096
    /// Processor cores a manifest may ask for.
    public static let coreRange = 0.05...64.0
    /// Threads a worker may run unless its manifest says otherwise.
    public static let defaultThreads: UInt32 = 256
    /// A worker's processor share unless its manifest says otherwise: one core.
    public static let defaultCPUPercent: UInt32 = 100
    /// A data folder's quota unless its manifest says otherwise: 1 GiB.
    public static let defaultDisk: UInt64 = 1 << 30

    /// The memory limit a worker gets: the manifest's, but never above `hostCeiling` (the
    /// host's `--max-plugin-memory`; 0 for no ceiling).
    package func memoryLimit(hostCeiling: UInt64) -> UInt64 {
        guard let memory else { return hostCeiling }
        return hostCeiling == 0 ? memory : min(memory, hostCeiling)
    }

    /// `"512 MiB"`, `"2 GiB"` or `"65536 KiB"` (the space optional) as bytes; nil for any other text.
    package static func bytes(_ text: String) -> UInt64? {
        let units: [(suffix: String, shift: UInt64)] = [("KiB", 10), ("MiB", 20), ("GiB", 30)]
        guard let unit = units.first(where: { text.hasSuffix($0.suffix) }) else { return nil }
        let digits = text.dropLast(unit.suffix.count).trimmingSuffix(" ")
        guard !digits.isEmpty, digits.count <= 9, digits.allSatisfy(\.isASCII), let count = UInt64(digits) else { return nil }
        return count << unit.shift
    }
}

private extension Substring {
    func trimmingSuffix(_ character: Character) -> Substring {
        last == character ? dropLast() : self
    }
}
