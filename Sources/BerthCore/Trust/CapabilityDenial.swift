/// The host's refusal of a call outside a plugin's capabilities: one line naming the call,
/// the plugin and the capability, with the fix.
package struct CapabilityDenial: Sendable, Equatable {
    package var plugin: String
    package var capability: Capability
    /// The `berth_host_v1` function refused (`navigate`, `persist_write`, `task_start`).
    package var call: String
    /// Where the plugin's author grants capabilities: a Swift plugin in its code, a C
    /// plugin in plugin.json.
    package var runtime: PluginRuntimeKind = .c

    package var message: String {
        "\(call): \(plugin) lacks the capability \(capability.howToGrant(runtime))"
    }

    /// The refusal a plugin's call gets.
    package var refusal: HostRefusal { HostRefusal(.denied, message) }

    /// The denial, or nil when `granted` holds `capability`.
    package static func check(_ capability: Capability, granted: Set<Capability>, plugin: String, call: String,
                              runtime: PluginRuntimeKind = .c) -> CapabilityDenial? {
        granted.contains(capability) ? nil : CapabilityDenial(plugin: plugin, capability: capability, call: call, runtime: runtime)
    }
}

extension Capability {
    /// The capability as its author writes it: `.statePersist` in a Swift plugin's code,
    /// `"state.persist"` in a C plugin's manifest.
    package func spelling(for runtime: PluginRuntimeKind) -> String {
        switch runtime {
        case .swift: ".\(self)"
        case .c: "'\(rawValue)'"
        }
    }

    /// "'.statePersist' (add it to Plugin(capabilities:))" or "'state.persist' (declare …)".
    /// `package`: the CLI's plugin facts (`berth pack`, `validate`) word a missing capability the same way.
    package func howToGrant(_ runtime: PluginRuntimeKind) -> String {
        switch runtime {
        case .swift: "\(spelling(for: runtime)) (add it to Plugin(capabilities:) in the plugin's code, then pack again)"
        case .c: "\(spelling(for: runtime)) (declare it in plugin.json \"capabilities\")"
        }
    }
}

/// One plugin generation's capabilities, as its handles carry them (immutable, so a call
/// from any thread can be checked).
package struct CapabilityGrant: Sendable, Equatable {
    package var pluginID: String
    package var capabilities: Set<Capability>
    /// The keys its manifest's `persist` list names: the only ones `state.persist` reaches.
    package var persistKeys: [String]
    /// The plugin's language, for how a denial names the capability.
    package var runtime: PluginRuntimeKind
    /// Refusals of calls a plugin repeats on every render, already reported for this grant
    /// (one per generation): each is reported once. Not part of what is granted.
    package let reportedRepeats = ReportedRefusals()

    package init(pluginID: String, capabilities: Set<Capability>, persistKeys: [String] = [], runtime: PluginRuntimeKind = .c) {
        self.pluginID = pluginID
        self.capabilities = capabilities
        self.persistKeys = persistKeys
        self.runtime = runtime
    }

    package init(manifest: PluginManifest) {
        self.init(pluginID: manifest.id, capabilities: manifest.grantedCapabilities, persistKeys: manifest.persist, runtime: manifest.runtime)
    }

    /// The denial of `call`, or nil when `capability` is granted.
    package func check(_ capability: Capability, call: String) -> CapabilityDenial? {
        CapabilityDenial.check(capability, granted: capabilities, plugin: pluginID, call: call, runtime: runtime)
    }
    package static func == (left: CapabilityGrant, right: CapabilityGrant) -> Bool {
        (left.pluginID, left.capabilities, left.persistKeys, left.runtime) == (right.pluginID, right.capabilities, right.persistKeys, right.runtime)
    }
}

/// What one generation's refusals have already reported, so a call repeated on every render
/// (`persist_read` of each `@Persisted`) makes one event per key, not one per render.
package final class ReportedRefusals: Sendable {
    private let reported = Locked<Set<String>>([])

    /// True the first time `refusal` (a call and its key) is seen.
    package func isFirst(_ refusal: String) -> Bool {
        reported.withLock { $0.insert(refusal).inserted }
    }
}
