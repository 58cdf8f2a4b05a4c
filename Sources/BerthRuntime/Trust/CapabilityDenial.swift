/// The host's refusal of a call outside a plugin's capabilities: one line naming the call,
/// the plugin and the capability, with the fix.
package struct CapabilityDenial: Sendable, Equatable {
    package var plugin: String
    package var capability: Capability
    /// The `berth_host_v1` function refused (`navigate`, `persist_write`, `task_start`).
    package var call: String

    package var message: String {
        "\(call): \(plugin) lacks the capability '\(capability.rawValue)' (declare it in plugin.json \"capabilities\")"
    }

    /// The refusal a plugin's call gets.
    package var refusal: HostRefusal { HostRefusal(.denied, message) }

    /// The denial, or nil when `granted` holds `capability`.
    package static func check(_ capability: Capability, granted: Set<Capability>, plugin: String, call: String) -> CapabilityDenial? {
        granted.contains(capability) ? nil : CapabilityDenial(plugin: plugin, capability: capability, call: call)
    }
}

/// One plugin generation's capabilities, as its handles carry them (immutable, so a call
/// from any thread can be checked).
package struct CapabilityGrant: Sendable, Equatable {
    package var pluginID: String
    package var capabilities: Set<Capability>
    /// The keys its manifest's `persist` list names: the only ones `state.persist` reaches.
    package var persistKeys: [String]

    package init(pluginID: String, capabilities: Set<Capability>, persistKeys: [String] = []) {
        self.pluginID = pluginID
        self.capabilities = capabilities
        self.persistKeys = persistKeys
    }

    package init(manifest: PluginManifest) {
        self.init(pluginID: manifest.id, capabilities: manifest.grantedCapabilities, persistKeys: manifest.persist)
    }

    /// The denial of `call`, or nil when `capability` is granted.
    package func check(_ capability: Capability, call: String) -> CapabilityDenial? {
        CapabilityDenial.check(capability, granted: capabilities, plugin: pluginID, call: call)
    }
}
