@_spi(Engine) import BerthCore
import Foundation

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
    /// What its generation's load cost, phase by phase; nil when it is not loaded.
    public var loadTimings: LoadTimings?
    /// When its generation was loaded (compare `BerthHost.startedAt`); nil when it is not loaded.
    public var loadedAt: ContinuousClock.Instant?
    /// Its manifest's limits (the defaults where it names none).
    public var limits: PluginLimits
    /// Its worker's use against those limits, when asked for (`measuringUse`) and it runs in one.
    public var use: WorkerUsage?
    /// The processor time its worker has used, when asked for and it runs in one.
    public var processorTime: Duration?
    /// Its worker's resident memory in bytes (the process its code runs in), when asked for
    /// and it runs in one.
    public var residentMemory: UInt64?
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
                  generation: generation?.number, placement: placement, loadTimings: generation?.loadTimings, loadedAt: generation?.loadedAt,
                  limits: manifest.limits, use: measured?.workerUsage(hostMemoryCeiling: settings.maxPluginMemory),
                  processorTime: measured?.workerProcessorTime, residentMemory: measured?.workerPluginPID.flatMap(Self.residentMemory(of:)),
                  crashes: record.crashes(within: settings.crashWindow))
    }
}

extension PluginSnapshot {
    /// A process's resident memory in bytes (`/proc/PID/statm`, its second field in pages).
    static func residentMemory(of pid: Int32) -> UInt64? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/statm", encoding: .utf8) else { return nil }
        let fields = text.split(separator: " ")
        guard fields.count > 1, let pages = UInt64(fields[1]) else { return nil }
        return pages * UInt64(sysconf(Int32(_SC_PAGESIZE)))
    }
}

extension PluginGeneration {
    /// The group its worker serves (nil in process, or for a worker of its own).
    var workerGroupName: String? { (connection as? IsolatedPlugin)?.group.name }
}
