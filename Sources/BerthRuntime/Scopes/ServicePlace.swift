@_spi(Engine) import BerthCore
/// The process a service's instances live in: the host's (the host's own registrations and
/// in-process plugins), or one worker's. An instance is a pointer into its process, so a
/// key resolves only from the place that provides it.
struct ServicePlace: Hashable, Sendable, CustomStringConvertible {
    /// 0 for the host; a worker's serial, unique for the host's life.
    private let number: Int
    /// How people read it: `in the host's process`, `in its own worker`, `in worker group 'g'`.
    let description: String

    static let host = ServicePlace(number: 0, description: "in the host's process")

    private static let lastWorker = Locked(0)

    /// A new worker's place; `group` names the manifests' group it serves, if any.
    static func newWorker(group: String?) -> ServicePlace {
        let number = lastWorker.withLock { last in
            last += 1
            return last
        }
        return ServicePlace(number: number, description: group.map { "in worker group '\($0)'" } ?? "in its own worker")
    }

    static func == (left: ServicePlace, right: ServicePlace) -> Bool { left.number == right.number }
    func hash(into hasher: inout Hasher) { hasher.combine(number) }
}

/// Who resolves a key: the plugin (with its capabilities; none for the host) and where it runs.
struct ServiceConsumer: Sendable {
    /// nil for the host, which may resolve every key.
    let grant: CapabilityGrant?
    let place: ServicePlace

    var plugin: String { grant?.pluginID ?? "the host" }

    static let host = ServiceConsumer(grant: nil, place: .host)

    /// The refusal of resolving `registration`, or nil. A plugin's own services need no
    /// capability; another provider's (a plugin's or the host's) needs `services.consume`
    /// here and, for a plugin, `services.provide` in the provider, whatever the isolation
    /// mode or worker group: a group shares a process, not trust.
    func denial(toResolve registration: ScopeRegistry.Registration) -> CapabilityDenial? {
        guard let grant, registration.plugin != grant.pluginID else { return nil }
        if let denial = grant.check(.servicesConsume, call: "service_resolve \(registration.key)") { return denial }
        return registration.providerGrant?.check(.servicesProvide, call: "service_resolve \(registration.key) from \(grant.pluginID)")
    }
}
