/// The manifest's `limits`: what an isolated plugin's worker may take (Docs/security.md).
/// The host's `--max-plugin-memory` is the default and the ceiling: a manifest may ask for
/// less, never for more.
public struct PluginLimits: Sendable, Equatable {
    /// The most memory the worker may take (RLIMIT_DATA), in bytes; nil for the host's default.
    public var memory: UInt64?

    /// Limits of `memory` bytes (nil: the host's default).
    public init(memory: UInt64? = nil) {
        self.memory = memory
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

    /// The memory limit a worker gets: the manifest's, but never above `hostCeiling` (the
    /// host's `--max-plugin-memory`; 0 for no ceiling).
    func memoryLimit(hostCeiling: UInt64) -> UInt64 {
        guard let memory else { return hostCeiling }
        return hostCeiling == 0 ? memory : min(memory, hostCeiling)
    }

    /// `"512 MiB"`, `"2 GiB"` or `"65536 KiB"` (the space optional) as bytes; nil for any other text.
    static func bytes(_ text: String) -> UInt64? {
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
