/// A host service or an OS resource a plugin declares in its manifest's `capabilities`.
/// The host refuses every `berth_host_v1` call outside the declared set with
/// `BERTH_ERR_DENIED`; the sandbox grants (`files.*`, `network`) confine an isolated
/// plugin's worker process (Docs/security.md).
package enum Capability: String, Sendable, Hashable, CaseIterable, Comparable {
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
    /// Let other plugins resolve its services (its own screens resolve them without it).
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
    package static let undeclaredDefault: Set<Capability> = Set(allCases.filter { !$0.isSandboxGrant })

    /// A grant the OS sandbox of a worker enforces; in process it cannot be enforced.
    package var isSandboxGrant: Bool {
        switch self {
        case .filesRead, .filesWrite, .network: true
        case .navigate, .navigateAny, .context, .delegate, .statePersist, .session, .servicesProvide, .servicesConsume, .tasks: false
        }
    }

    /// Orders as berth.h lists the capabilities.
    package static func < (lhs: Capability, rhs: Capability) -> Bool {
        (allCases.firstIndex(of: lhs) ?? 0) < (allCases.firstIndex(of: rhs) ?? 0)
    }
}
