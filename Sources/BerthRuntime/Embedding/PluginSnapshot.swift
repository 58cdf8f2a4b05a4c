/// One plugin the host knows, as an application sees it: a value read on the main actor.
public struct PluginSnapshot: Sendable, Equatable, Identifiable {
    /// Where a plugin's loaded generation runs.
    public enum Placement: Sendable, Equatable {
        /// In the host's process (on a lane of its own).
        case inProcess
        /// In a worker process, `pid`, its own or the worker of its manifest's `group`.
        case worker(pid: Int32, group: String?)
    }

    /// The plugin's id.
    public var id: String
    /// Its manifest's version.
    public var version: SemanticVersion
    /// One word: discovered, loaded, crashed or failed (`PluginRecord.State.name`).
    public var state: String
    /// Its routes, each with the plugin named.
    public var routes: [Route]
    /// Where the host puts it (its manifest and the host's isolation policy).
    public var isolation: IsolationMode
    /// Its loaded generation's number; nil when it is not loaded.
    public var generation: Int?
    /// Where its generation runs; nil when it is not loaded.
    public var placement: Placement?
    /// Its manifest's limits (the defaults where it names none).
    public var limits: PluginLimits
    /// Its worker's use against those limits, when asked for (`measuringUse`) and it runs in one.
    public var use: WorkerUsage?
    /// The processor time its worker has used, when asked for and it runs in one.
    public var processorTime: Duration?
    /// Its worker's crashes within the host's crash window (`IsolationSettings.crashWindow`).
    public var crashes: Int
}

extension PluginSnapshot {
    /// The plugin `record` holds, as it is now; its worker's figures read from the kernel
    /// when `measuringUse`.
    @MainActor
    init(_ record: PluginRecord, isolation settings: IsolationSettings, measuringUse: Bool) {
        let manifest = record.source.manifest
        let generation = record.generation
        let placement: Placement? = generation.map { generation in
            generation.workerPID.map { .worker(pid: $0, group: generation.workerGroupName) } ?? .inProcess
        }
        let measured = measuringUse ? generation : nil
        self.init(id: manifest.id, version: manifest.version, state: record.stateName,
                  routes: manifest.routes.map { Route(plugin: manifest.id, name: $0) }, isolation: settings.mode(for: manifest),
                  generation: generation?.number, placement: placement, limits: manifest.limits,
                  use: measured?.workerUsage(hostMemoryCeiling: settings.maxPluginMemory), processorTime: measured?.workerProcessorTime,
                  crashes: record.crashes(within: settings.crashWindow))
    }
}

extension PluginGeneration {
    /// The group its worker serves (nil in process, or for a worker of its own).
    var workerGroupName: String? { (connection as? IsolatedPlugin)?.group.name }
}
