@_spi(Engine) import BerthCore
/// The manifest's `limits` on what the host holds for a plugin: `state`, `stateSlots`,
/// `logLine` and `logRate` (Docs/worker-limits.md). They bound the host, so they apply in
/// both isolation modes; a manifest may lower them or raise them up to a ceiling.
extension ManifestReader {
    mutating func readHostBudgets(_ object: [String: Any], into limits: inout PluginLimits) {
        if let bytes = readSize(object, "state", least: 4 << 10, most: PluginLimits.ceilingStateBytes) { limits.stateBytes = bytes }
        if let count = readCount(object, "stateSlots", least: 16, most: PluginLimits.ceilingStateSlots) { limits.stateSlots = count }
        if let bytes = readSize(object, "logLine", least: 1 << 10, most: PluginLimits.ceilingLogLineBytes) { limits.logLineBytes = bytes }
        if let count = readCount(object, "logRate", least: 1, most: PluginLimits.ceilingLogLinesPerSecond) { limits.logLinesPerSecond = count }
    }

    private mutating func readSize(_ object: [String: Any], _ name: String, least: Int, most: Int) -> Int? {
        guard let value = object[name] else { return nil }
        guard let text = value as? String, let bytes = PluginLimits.bytes(text) else {
            fail("limits.\(name)", "\(quoted(value)) is not a size such as \"16 MiB\" (a whole number of KiB, MiB or GiB)")
            return nil
        }
        guard bytes >= least, bytes <= most else {
            fail("limits.\(name)", "\(quoted(text)) is outside \(ByteCountText.binary(least))...\(ByteCountText.binary(most))")
            return nil
        }
        return Int(bytes)
    }

    private mutating func readCount(_ object: [String: Any], _ name: String, least: Int, most: Int) -> Int? {
        guard let value = object[name] else { return nil }
        guard let number = value as? Int, number >= least, number <= most else {
            fail("limits.\(name)", "\(quoted(value)) is not a whole number in \(least)...\(most)")
            return nil
        }
        return number
    }
}

extension PluginLimits {
    /// The `limits` fields of the host's budgets.
    static let hostBudgetFields = ["state", "stateSlots", "logLine", "logRate"]
    static let ceilingStateBytes = 1 << 30
    static let ceilingStateSlots = 1 << 20
    static let ceilingLogLineBytes = 1 << 20
    static let ceilingLogLinesPerSecond = 10_000
}
