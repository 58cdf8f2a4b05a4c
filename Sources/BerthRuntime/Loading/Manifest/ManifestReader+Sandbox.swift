/// The manifest fields that shape an isolated plugin's worker beyond its capabilities:
/// `limits` and `environment` (Docs/security.md).
extension ManifestReader {
    /// `{"memory": "512 MiB"}`.
    mutating func readLimits(_ fields: [String: Any]) -> PluginLimits {
        guard let value = fields["limits"] else { return PluginLimits() }
        guard let object = value as? [String: Any] else {
            fail("limits", "must be an object such as {\"memory\": \"512 MiB\"}")
            return PluginLimits()
        }
        let known = ["memory"] + PluginLimits.hostBudgetFields
        for unknown in object.keys.filter({ !known.contains($0) }).sorted() {
            warn("limits.\(unknown)", "unknown field (expected \(known.map { "\"\($0)\"" }.joined(separator: ", ")))")
        }
        var limits = PluginLimits()
        readHostBudgets(object, into: &limits)
        guard let memory = object["memory"] else { return limits }
        guard let text = memory as? String, let bytes = PluginLimits.bytes(text) else {
            fail("limits.memory", "\(quoted(memory)) is not a size such as \"512 MiB\" (a whole number of KiB, MiB or GiB)")
            return limits
        }
        guard bytes >= PluginLimits.minimumMemory else {
            fail("limits.memory", "\(quoted(text)) is below the least a worker needs to start (\(PluginLimits.minimumMemory >> 20) MiB)")
            return limits
        }
        limits.memory = bytes
        return limits
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
