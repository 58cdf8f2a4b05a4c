@_spi(Engine) import BerthCore
/// The host as a plugin's calls back into it reach it: navigation, route context,
/// sessions and services, persistence, the event log and a refusal's report. Screen and
/// plugin handles, and the connections that make them, hold this rather than `BerthHost`,
/// so loading, unloading and reloading stay out of a plugin's reach. `BerthHost` is the
/// one conformer. `Sendable` as any main-actor class is: a plugin handle, usable from any
/// thread, keeps it and uses it on the main actor only.
@MainActor
protocol PluginFacingHost: AnyObject, Sendable {
    /// The router tree and the queue plugin requests wait in until the host is at top level.
    var navigator: Navigator { get }
    /// Scoped services and sessions.
    var scopes: ScopeRegistry { get }
    /// Route-context observers and delivery.
    var routeContext: RouteContextDispatcher { get }
    /// The database persisted values live in, when persistence is on.
    var persistentStore: PersistentStore? { get }
    /// Whether values persist, and if not, why.
    var persistenceStatus: PersistenceStatus { get }
    func emit(_ kind: HostEvent.Kind, _ subject: HostEvent.Subject, _ message: String)
    /// Reports a call refused for a missing capability as a `denied` event.
    func report(_ denial: CapabilityDenial)
    func close(_ router: Router)
    /// A context the plugin sent (`terminating`: with `terminate`'s navigation); `onLanes`:
    /// each observing screen gets it on its own plugin's lane.
    func sendContext(_ type: String, payload: [UInt8], from sender: Router, terminating: Bool, onLanes: Bool)
    func canTerminate(_ type: String, from sender: Router) -> Bool
    func topLevel<T, E: Error>(_ body: () throws(E) -> T) throws(E) -> T
    /// Starts `plugin` again if its worker crashed within its crash budget, as its next
    /// use does (`generationForUse`).
    func startAgainAfterCrash(_ plugin: String) -> CrashedProviderStart
    func beginSession(_ id: String)
    @discardableResult
    func endSession() -> String?
}

extension BerthHost: PluginFacingHost {}

/// What a contract call's resolve got from asking a provider that is gone to start again.
enum CrashedProviderStart {
    /// It was unloaded, not crashed: nothing starts it but a load.
    case notCrashed
    case started
    /// Past its crash budget, or its load failed: why, in one line.
    case refused(String)
}
