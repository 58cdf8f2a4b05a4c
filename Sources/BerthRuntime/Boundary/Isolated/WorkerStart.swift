@_spi(Engine) import BerthCore
import Foundation
import Logging

/// The steps of an isolated generation's start before its `hello`: the verified shadow copy,
/// the worker (its group's open one, or one of its own from the pool), the plugin's place in
/// it. `IsolatedPlugin.init` takes them on the main actor; `IsolatedPlugin.start` starts the
/// worker on a thread of its own and sends the `hello` on the worker's lane.
@MainActor
struct WorkerStart {
    let plugin: ValidatedPlugin
    let generation: Int
    let runtimeDirectory: RuntimeDirectory
    let workerExecutable: String
    let unresponsive: Duration
    let keepWorkerReady: Bool
    let workerPool: WorkerPool
    let sandbox: SandboxPolicy?
    let groups: WorkerGroups?
    let logger: Logger
    /// The shadow copy the worker opens.
    let shadow: String
    private(set) var timings = LoadTimings()
    private let workerStarted: ContinuousClock.Instant

    /// Makes the shadow copy for `generation` (or takes the one prepared for it).
    init(plugin: ValidatedPlugin, generation: Int, runtimeDirectory: RuntimeDirectory, settings: IsolationSettings, workerPool: WorkerPool,
         sandbox: SandboxPolicy? = nil, groups: WorkerGroups? = nil, logger: Logger) throws(LoaderError) {
        self.plugin = plugin
        self.generation = generation
        self.runtimeDirectory = runtimeDirectory
        workerExecutable = settings.resolvedWorkerExecutable
        unresponsive = settings.unresponsiveAfter
        keepWorkerReady = settings.keepWorkerReady
        self.workerPool = workerPool
        self.sandbox = sandbox
        self.groups = groups
        var logger = logger
        logger[metadataKey: "plugin"] = "\(plugin.manifest.id)#\(generation)"
        self.logger = logger
        let copyStarted = ContinuousClock.now
        shadow = try runtimeDirectory.verifiedShadowCopy(of: plugin, generation: generation)
        timings.copyAndHash = copyStarted.elapsed
        workerStarted = .now
    }

    private var pluginID: String { plugin.manifest.id }

    /// The open worker of the manifest's group that admits the plugin, if any.
    var openGroup: WorkerGroup? {
        guard let name = plugin.manifest.isolationGroup, let open = groups?.open(name),
              sandbox == nil || open.admits(runtimeDirectory.folder(of: pluginID)) else { return nil }
        return open
    }

    /// `openGroup`, refused while that worker is in a call (the host does not wait for it:
    /// a caller waits for a task's post before, `IsolatedPlugin.start` awaiting it).
    /// `stoppingUnused`: a worker started meanwhile, stopped when an open group is joined
    /// instead.
    func takeOpenGroup(stoppingUnused spawned: WorkerProcess? = nil) throws(LoaderError) -> WorkerGroup? {
        guard let open = openGroup, let name = open.name else { return nil }
        if let spawned { Thread.detachNewThread { WorkerGroup.stop(spawned) } }
        if let busy = open.lane.callInTheWay {
            runtimeDirectory.discard(shadowCopy: shadow)
            throw LoaderError(.workerFailed, plugin: pluginID, detail: "its group '\(name)' is busy: \(busy.description) has run for \(busy.elapsedMilliseconds) ms; load it once that returns")
        }
        return open
    }

    /// How a worker of its own is started, on any thread (`IsolatedPlugin.start` does it on a
    /// thread of its own).
    var spawner: OwnWorkerStart {
        OwnWorkerStart(pool: workerPool, executable: workerExecutable, plugin: pluginID, keepOneReady: keepWorkerReady,
                      runtimeDirectory: runtimeDirectory, shadow: shadow)
    }

    /// A new group around `worker`, confined and listed.
    func newGroup(_ worker: WorkerProcess) -> WorkerGroup {
        let group = WorkerGroup(name: plugin.manifest.isolationGroup, worker: worker, unresponsive: unresponsive, logger: logger)
        group.confine(to: sandbox)
        groups?.add(group)
        return group
    }

    /// Takes a member's place in `group`, ready for the `hello`.
    func join(_ group: WorkerGroup, host: (any PluginFacingHost)?) -> JoinedWorker {
        let manifest = plugin.manifest
        let member = group.takeMember()
        let services = WorkerServiceLink(pluginID: manifest.id, generation: generation, grant: CapabilityGrant(manifest: manifest),
                                         place: group.place, endedOffMain: group.endedOffMain, host: host)
        group.router.add(member: member, services: services, logger: logger, limits: manifest.limits)
        var timings = timings
        timings.dlopen = workerStarted.elapsed
        var hello = WorkerHello(manifest: manifest, libraryPath: shadow, sandbox: sandbox)
        hello.sandbox?.cgroups = group.worker.cgroup?.folders
        hello.member = member
        // The load includes the worker's own start (the Swift runtime, Foundation), which a
        // busy machine slows: it gets at least `loadTimeout`, a call after it `unresponsive`.
        return JoinedWorker(pluginID: manifest.id, runtimeDirectory: runtimeDirectory, workerPool: workerPool, group: group, member: member,
                            services: services, hello: hello, helloTimeout: max(unresponsive, IsolatedPlugin.loadTimeout), timings: timings)
    }
}

/// A plugin's place in its worker, its `hello` not yet answered.
@MainActor
struct JoinedWorker {
    let pluginID: String
    let runtimeDirectory: RuntimeDirectory
    let workerPool: WorkerPool
    let group: WorkerGroup
    let member: UInt64
    let services: WorkerServiceLink
    let hello: WorkerHello
    let helloTimeout: Duration
    let timings: LoadTimings
    let helloSent = ContinuousClock.now

    /// The `hello` did not come back: the worker failed while loading.
    func failed(_ error: ChannelError) -> LoaderError {
        let summary = group.failure?.summary ?? error.message
        abandon()
        return LoaderError(.workerFailed, plugin: pluginID, detail: "the worker failed while loading: \(summary)")
    }

    /// The plugin leaves its worker, and its shadow copy goes.
    func abandon() {
        group.leave(member)
        runtimeDirectory.discard(shadowCopy: hello.libraryPath)
    }
}

/// A worker of a plugin's own, taken from its host's pool.
struct OwnWorkerStart: Sendable {
    let pool: WorkerPool
    let executable: String
    let plugin: String
    let keepOneReady: Bool
    let runtimeDirectory: RuntimeDirectory
    /// Discarded when no worker starts.
    let shadow: String

    /// Starts (or takes a waiting) worker. Thread: any.
    func spawn() throws(LoaderError) -> WorkerProcess {
        do {
            // Without the Swift runtime's crash backtracer (WorkerProcess.spawn's default): it
            // would hold a crashed worker for seconds; the host reports the signal and the
            // fatal line itself.
            return try pool.take(executable: executable, plugin: plugin, keepOneReady: keepOneReady)
        } catch {
            runtimeDirectory.discard(shadowCopy: shadow)
            throw LoaderError(.workerFailed, plugin: plugin, detail: "cannot start a worker: \(error.reason)")
        }
    }
}
