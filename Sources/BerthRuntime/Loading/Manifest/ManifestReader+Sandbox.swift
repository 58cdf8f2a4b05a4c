@_spi(Engine) import BerthCore
/// The manifest fields that shape an isolated plugin's worker beyond its capabilities:
/// `limits` and `environment` (Docs/security.md).
extension ManifestReader {
    /// `{"memory": "512 MiB", "threads": 256, "cpu": 1.5, "disk": "1 GiB"}`.
    mutating func readLimits(_ fields: [String: Any]) -> PluginLimits {
        guard let value = fields["limits"] else { return PluginLimits() }
        guard let object = value as? [String: Any] else {
            fail("limits", "must be an object such as {\"memory\": \"512 MiB\"}")
            return PluginLimits()
        }
        let known = ["memory", "threads", "cpu", "disk"] + PluginLimits.hostBudgetFields
        for unknown in object.keys.filter({ !known.contains($0) }).sorted() {
            warn("limits.\(unknown)", "unknown field (expected \(known.map { "\"\($0)\"" }.joined(separator: ", ")))")
        }
        var limits = PluginLimits()
        readHostBudgets(object, into: &limits)
        limits.memory = readSize(object, "memory", least: PluginLimits.minimumMemory)
        limits.disk = readSize(object, "disk", least: PluginLimits.minimumDisk)
        if let threads = object["threads"] {
            if let count = threads as? Int, !(threads is Bool), PluginLimits.threadRange.contains(count) {
                limits.threads = UInt32(count)
            } else {
                fail("limits.threads", "\(quoted(threads)) is not a whole number of threads from \(PluginLimits.threadRange.lowerBound) to \(PluginLimits.threadRange.upperBound)")
            }
        }
        if let cpu = object["cpu"] {
            if let cores = cpu as? Double, !(cpu is Bool), PluginLimits.coreRange.contains(cores) {
                limits.cpuPercent = UInt32((cores * 100).rounded())
            } else {
                fail("limits.cpu", "\(quoted(cpu)) is not a number of processor cores from \(PluginLimits.coreRange.lowerBound) to \(Int(PluginLimits.coreRange.upperBound)), such as 0.5 or 2")
            }
        }
        return limits
    }

    /// The size `object[name]` names, nil when absent or refused (in one line).
    private mutating func readSize(_ object: [String: Any], _ name: String, least: UInt64) -> UInt64? {
        guard let value = object[name] else { return nil }
        guard let text = value as? String, let bytes = PluginLimits.bytes(text) else {
            fail("limits.\(name)", "\(quoted(value)) is not a size such as \"512 MiB\" (a whole number of KiB, MiB or GiB)")
            return nil
        }
        guard bytes >= least else {
            fail("limits.\(name)", "\(quoted(text)) is below the least a worker needs to start (\(least >> 20) MiB)")
            return nil
        }
        return bytes
    }

    /// Names of host variables passed on to the plugin's worker, beyond the allowlist.
    mutating func readEnvironment(_ fields: [String: Any]) -> [String] {
        var names = readStringList(fields, "environment", rule: ManifestNames.isVariableName, expected: "a variable name of letters, digits and '_'")
        let listed = fields["environment"] as? [Any] ?? []
        for name in names {
            guard let reason = ManifestNames.withheldVariable(name) else { continue }
            let index = listed.firstIndex { $0 as? String == name } ?? 0
            fail("environment[\(index)]", "\(quoted(name)) is never passed to a plugin: \(reason)")
        }
        names.removeAll { ManifestNames.withheldVariable($0) != nil }
        return names
    }
}
