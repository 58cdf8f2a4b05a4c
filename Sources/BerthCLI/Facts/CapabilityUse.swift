import BerthRuntime

/// What a plugin's facts show it uses that its capabilities do not grant: every such call
/// would be refused at run time, so `pack` and `validate` say so first, in the author's
/// spelling (`.statePersist` in `Plugin(capabilities:)`, `"state.persist"` in plugin.json).
enum CapabilityUse {
    /// One warning per capability used but not granted; none when the manifest declares no
    /// `capabilities` (it then has every host service). Each `sourceUses` entry is what the
    /// code does, as a verb phrase ("opens com.example.tags/pick"). Registering services
    /// needs no capability, and pack cannot know whether other plugins will resolve them,
    /// so `services.provide` is never warned about.
    static func warnings(for manifest: PluginManifest, sourceUses: [(capability: Capability, use: String)] = []) -> [String] {
        guard manifest.capabilities != nil else { return [] }
        var needed: [(Capability, String)] = sourceUses.map { ($0.capability, "its code \($0.use)") }
        if !manifest.persist.isEmpty {
            needed.append((.statePersist, "it persists \(ManifestFacts.list(manifest.persist))"))
        }
        return needed.filter { !manifest.grantedCapabilities.contains($0.0) }.map { capability, use in
            "\(manifest.id): \(use) but its capabilities lack \(capability.howToGrant(manifest.runtime)): every such call will be refused"
        }
    }
}
