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
        for unknown in object.keys.filter({ $0 != "memory" }).sorted() {
            warn("limits.\(unknown)", "unknown field (expected \"memory\")")
        }
        guard let memory = object["memory"] else { return PluginLimits() }
        guard let text = memory as? String, let bytes = PluginLimits.bytes(text) else {
            fail("limits.memory", "\(quoted(memory)) is not a size such as \"512 MiB\" (a whole number of KiB, MiB or GiB)")
            return PluginLimits()
        }
        guard bytes >= PluginLimits.minimumMemory else {
            fail("limits.memory", "\(quoted(text)) is below the least a worker needs to start (\(PluginLimits.minimumMemory >> 20) MiB)")
            return PluginLimits()
        }
        return PluginLimits(memory: bytes)
    }

    /// Names of host variables passed on to the plugin's worker, beyond the allowlist.
    mutating func readEnvironment(_ fields: [String: Any]) -> [String] {
        var names = readStringList(fields, "environment", rule: Self.isVariableName, expected: "a variable name of letters, digits and '_'")
        let listed = fields["environment"] as? [Any] ?? []
        for name in names {
            guard let reason = Self.withheldVariable(name) else { continue }
            let index = listed.firstIndex { $0 as? String == name } ?? 0
            fail("environment[\(index)]", "\(quoted(name)) is never passed to a plugin: \(reason)")
        }
        names.removeAll { Self.withheldVariable($0) != nil }
        return names
    }

    static func isVariableName(_ name: String) -> Bool {
        guard let first = name.utf8.first, !(0x30...0x39).contains(first), name.utf8.count <= 128 else { return false }
        return name.utf8.allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x41 && $0 <= 0x5A) || ($0 >= 0x61 && $0 <= 0x7A) || $0 == 0x5F }
    }

    /// Why the host never passes `name` to a worker, or nil when it may.
    static func withheldVariable(_ name: String) -> String? {
        let upper = name.uppercased()
        if ["XDG_RUNTIME_DIR", "SSH_AUTH_SOCK", "SSH_AGENT_PID", "GPG_AGENT_INFO", "DBUS_SESSION_BUS_ADDRESS"].contains(upper) {
            return "it leads to the user's sockets (the host's control socket, agents, the session bus)"
        }
        if upper.hasPrefix("BERTH_") { return "BERTH_ variables are the host's own (its control socket and token among them)" }
        if upper.hasPrefix("LD_") || upper == "GLIBC_TUNABLES" || upper.hasPrefix("MALLOC_") || upper.hasPrefix("SWIFT_") {
            return "it changes how the worker's own libraries load and run"
        }
        return nil
    }
}
