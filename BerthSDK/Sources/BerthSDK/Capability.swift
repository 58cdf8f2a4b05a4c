/// A host service or OS resource a plugin may use, as the manifest's `capabilities` names
/// it (Docs/security.md). A call outside the granted set fails with `BerthError.Code.denied`.
public enum Capability: String, Sendable, CaseIterable {
    /// Push or present its own routes, pop and dismiss.
    case navigate
    /// Open other plugins' routes.
    case navigateAny = "navigate.any"
    /// Observe and send route contexts.
    case context
    /// Observe and send delegate actions.
    case delegate
    /// `@Persisted` values.
    case statePersist = "state.persist"
    /// Begin and end the user's session.
    case session
    /// Let other plugins resolve its services (its own screens resolve them without it).
    case servicesProvide = "services.provide"
    /// Resolve other plugins' services.
    case servicesConsume = "services.consume"
    /// Managed tasks.
    case tasks
    /// Read the paths the manifest's `files.read` grants (isolated plugins).
    case filesRead = "files.read"
    /// Write the paths the manifest's `files.write` grants (isolated plugins).
    case filesWrite = "files.write"
    /// TCP connect and bind (isolated plugins).
    case network
}
