/// A host service or an OS resource a plugin declares in its manifest's `capabilities`.
/// The host refuses every `berth_host_v1` call outside the declared set with
/// `BERTH_ERR_DENIED`; the sandbox grants (`files.*`, `network`) confine an isolated
/// plugin's worker process (Docs/security.md).
public enum Capability: String, Sendable, Hashable, CaseIterable, Comparable {
    /// Push, present, pop and dismiss with the plugin's own routes.
    case navigate
    /// Push or present another plugin's routes.
    case navigateAny = "navigate.any"
    /// Observe, send and terminate route contexts.
    case context
    /// Observe child screens' delegate actions and send its own.
    case delegate
    /// Read and write the values its manifest's `persist` list names.
    case statePersist = "state.persist"
    /// Begin and end the host's session scope.
    case session
    /// Register scoped services for other plugins.
    case servicesProvide = "services.provide"
    /// Resolve other plugins' services.
    case servicesConsume = "services.consume"
    /// Start managed tasks and post their results.
    case tasks
    /// Read the paths of the manifest's `files.read` (isolated plugins).
    case filesRead = "files.read"
    /// Write the paths of the manifest's `files.write` (isolated plugins).
    case filesWrite = "files.write"
    /// Bind and connect TCP sockets (isolated plugins).
    case network

    /// What a manifest without `capabilities` gets: every host service, so plugins written
    /// before capabilities keep working, and no file or network grant beyond the sandbox's
    /// defaults.
    public static let undeclaredDefault: Set<Capability> = Set(allCases.filter { !$0.isSandboxGrant })

    /// A grant the OS sandbox of a worker enforces; in process it cannot be enforced.
    public var isSandboxGrant: Bool {
        switch self {
        case .filesRead, .filesWrite, .network: true
        case .navigate, .navigateAny, .context, .delegate, .statePersist, .session, .servicesProvide, .servicesConsume, .tasks: false
        }
    }

    public static func < (lhs: Capability, rhs: Capability) -> Bool {
        (allCases.firstIndex(of: lhs) ?? 0) < (allCases.firstIndex(of: rhs) ?? 0)
    }
}

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

    package init(pluginID: String, capabilities: Set<Capability>) {
        self.pluginID = pluginID
        self.capabilities = capabilities
    }

    package init(manifest: PluginManifest) {
        self.init(pluginID: manifest.id, capabilities: manifest.grantedCapabilities)
    }

    /// The denial of `call`, or nil when `capability` is granted.
    package func check(_ capability: Capability, call: String) -> CapabilityDenial? {
        CapabilityDenial.check(capability, granted: capabilities, plugin: pluginID, call: call)
    }
}
