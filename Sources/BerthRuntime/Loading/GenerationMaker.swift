@_spi(Engine) import BerthCore
import Foundation

/// Makes a plugin's generations and ends them. Making: in the host's process (after the
/// worker-writable folder check and the trial load) or in a worker (its group's sandbox);
/// ending: the services its factories made are released first, then a Swift image is
/// retired (and counted against `retiredLimitBytes`), a C image unmapped, a worker ended.
@MainActor
final class GenerationMaker {
    let configuration: BerthHost.Configuration
    let runtimeDirectory: RuntimeDirectory
    let registry: PluginRegistry
    private let scopes: ScopeRegistry
    let events: EventLog
    /// What the generations' plugins call back into.
    private weak var pluginHost: (any PluginFacingHost)?
    /// Told when a worker dies or hangs, with the generation's number.
    private let onWorkerFailure: @MainActor (WorkerFailure, Int) -> Void
    /// The live workers of manifest groups, which their members' generations join.
    let workerGroups = WorkerGroups()
    /// Workers started ahead of need (`IsolationSettings.keepWorkerReady`); drained at shutdown.
    let workerPool = WorkerPool()
    /// Swift generations retired (still mapped), and their bytes.
    private(set) var retiredGenerations = 0
    /// Set at the host's exit: a worker's last plugin then ends with the host waiting for the
    /// worker (`PluginConnection.end(waitingForWorker:)`); before, it ends on its lane.
    var isShuttingDown = false
    private(set) var retiredBytes = 0
    /// Retired image bytes past which it emits `retiredLimitExceeded` (nil: no limit).
    var retiredLimitBytes: Int? = 256 * 1024 * 1024
    /// What each plugin's last trial load took (a reload's `canary` phase), by plugin id: two
    /// plugins reloading at once each see their own. A reload clears its plugin's first.
    var canaryDurations: [String: Duration] = [:]
    private var warnedNoCanary = false
    /// Set once it warned that workers run without Landlock.
    var warnedNoSandbox = false

    init(configuration: BerthHost.Configuration, runtimeDirectory: RuntimeDirectory, registry: PluginRegistry, scopes: ScopeRegistry,
         events: EventLog, pluginHost: any PluginFacingHost, onWorkerFailure: @escaping @MainActor (WorkerFailure, Int) -> Void) {
        self.configuration = configuration
        self.runtimeDirectory = runtimeDirectory
        self.registry = registry
        self.scopes = scopes
        self.events = events
        self.pluginHost = pluginHost
        self.onWorkerFailure = onWorkerFailure
    }

    /// Makes `record`'s next generation where its manifest and the settings say it runs,
    /// on the main actor, which waits for the trial load, the `dlopen` and handshake (or the
    /// worker's start and `hello`).
    func make(_ record: PluginRecord) throws(LoaderError) -> PluginGeneration {
        let next = nextGeneration(of: record.source)
        do {
            switch next.mode {
            case .inProcess: return made(next, connection: try inProcessPlugin(next))
            case .process: return made(next, connection: try watched(IsolatedPlugin(workerStart(for: next), host: pluginHost), next))
            }
        } catch {
            throw failedToMake(next, error)
        }
    }

    /// `make` for `source`, with the trial load, the image's `dlopen` and handshake (on the
    /// new generation's own lane) or the worker's start and `hello` (on its lane) off the
    /// main actor, which goes on meanwhile and answers what the plugin's entry asks of it.
    /// The caller records the generation (`PluginRecord.loaded`), or ends it with `end`.
    /// What its entry registers is held out of force until `putInUse`.
    func makeOffMain(_ source: ValidatedPlugin) async throws(LoaderError) -> PluginGeneration {
        let next = nextGeneration(of: source)
        scopes.holdRegistrations(plugin: next.id, generation: next.number)
        do {
            switch next.mode {
            case .inProcess: return made(next, connection: try await inProcessPluginOffMain(next))
            case .process: return made(next, connection: try watched(await IsolatedPlugin.start(workerStart(for: next), host: pluginHost), next))
            }
        } catch {
            throw failedToMake(next, error)
        }
    }

    /// A generation `makeOffMain` made is about to be used: the services its entry
    /// registered come into force (a reload's new screens resolve them as they open).
    func putInUse(_ generation: PluginGeneration) {
        scopes.admitRegistrations(plugin: generation.pluginID, generation: generation.number)
    }

    /// A generation about to be made: its source, its number (taken now) and where it runs.
    private struct NextGeneration {
        let source: ValidatedPlugin
        let number: Int
        let mode: IsolationMode
        var id: String { source.manifest.id }
    }

    private func nextGeneration(of source: ValidatedPlugin) -> NextGeneration {
        NextGeneration(source: source, number: registry.nextGenerationNumber(of: source.manifest.id),
                       mode: configuration.isolation.mode(for: source.manifest))
    }

    /// An in-process generation, after the worker-writable folder check and the trial load.
    private func inProcessPlugin(_ next: NextGeneration) throws(LoaderError) -> InProcessPlugin {
        try refuseInProcessLoadFromWorkerWritableFolder(next.source)
        try trialLoad(next.source, generation: next.number)
        warnUnenforceableGrants(of: next.source.manifest)
        return try InProcessPlugin(plugin: next.source, generation: next.number, runtimeDirectory: runtimeDirectory, logger: configuration.logger,
                                   host: pluginHost, onRetire: retiredAfterFailedLoad(next))
    }

    /// `inProcessPlugin`, its trial and its image's open off the main actor.
    private func inProcessPluginOffMain(_ next: NextGeneration) async throws(LoaderError) -> InProcessPlugin {
        try refuseInProcessLoadFromWorkerWritableFolder(next.source)
        try await trialLoadOffMain(next.source, generation: next.number)
        warnUnenforceableGrants(of: next.source.manifest)
        return try await InProcessPlugin.open(plugin: next.source, generation: next.number, runtimeDirectory: runtimeDirectory,
                                              logger: configuration.logger, host: pluginHost, onRetire: retiredAfterFailedLoad(next))
    }

    /// A Swift image retired after its load failed is counted and reported.
    private func retiredAfterFailedLoad(_ next: NextGeneration) -> (Int) -> Void {
        { [self] bytes in
            retire(bytes)
            events.emit(.retired, .plugin(next.id), "generation \(next.number) retired after a failed load (Swift image stays mapped)")
        }
    }

    /// The start of a worker generation (its group's, when it consents to one).
    private func workerStart(for next: NextGeneration) throws(LoaderError) -> WorkerStart {
        let source = consentedToGroup(next.source)
        return try WorkerStart(plugin: source, generation: next.number, runtimeDirectory: runtimeDirectory, settings: configuration.isolation,
                               workerPool: workerPool, sandbox: configuration.isolation.confinesWorkers ? try groupSandboxPolicy(for: source) : nil,
                               groups: workerGroups, logger: configuration.logger)
    }

    /// A started worker generation, its sandbox reported and its failures told to the host.
    private func watched(_ isolated: IsolatedPlugin, _ next: NextGeneration) -> IsolatedPlugin {
        warnIfUnconfined(isolated.sandbox)
        let number = next.number
        isolated.onFailure = { [onWorkerFailure] failure in onWorkerFailure(failure, number) }
        return isolated
    }

    /// A load that failed: the services its entry may have registered before go.
    private func failedToMake(_ next: NextGeneration, _ error: LoaderError) -> LoaderError {
        scopes.unloadProvider(plugin: next.id, generation: next.number)
        return error
    }

    private func made(_ next: NextGeneration, connection: any PluginConnection) -> PluginGeneration {
        let generation = PluginGeneration(source: next.source, number: next.number, connection: connection, isolation: next.mode)
        let place = next.mode == .process ? ", in a worker process" : ""
        events.emit(.loaded, .plugin(next.id), "generation \(next.number) loaded (\(next.source.manifest.runtime.rawValue), ABI \(generation.handshake.abi)\(place))")
        return generation
    }

    /// The canary load of a new in-process generation (IsolationSettings.canary).
    private func trialLoad(_ plugin: ValidatedPlugin, generation number: Int) throws(LoaderError) {
        guard configuration.isolation.canary else { return }
        let started = ContinuousClock.now
        defer { canaryDurations[plugin.manifest.id] = started.elapsed }
        noteTrial(ran: try CanaryLoad.run(plugin, generation: number, runtimeDirectory: runtimeDirectory,
                                          settings: configuration.isolation, workerPool: workerPool))
    }

    /// `trialLoad`, its worker started and called off the main actor.
    private func trialLoadOffMain(_ plugin: ValidatedPlugin, generation number: Int) async throws(LoaderError) {
        guard configuration.isolation.canary else { return }
        let started = ContinuousClock.now
        defer { canaryDurations[plugin.manifest.id] = started.elapsed }
        noteTrial(ran: try await CanaryLoad.runOffMain(plugin, generation: number, runtimeDirectory: runtimeDirectory,
                                                       settings: configuration.isolation, workerPool: workerPool))
    }

    /// Warns once when no worker is there to run trials.
    private func noteTrial(ran: Bool) {
        if !ran && !warnedNoCanary {
            warnedNoCanary = true
            events.emit(.failed, .host, "no berth-worker at \(configuration.isolation.resolvedWorkerExecutable): in-process plugins load without a trial run")
        }
    }

    /// Ends a generation that is being replaced or unloaded; a failure is logged.
    func end(_ generation: PluginGeneration) {
        do throws(LoaderError) {
            try endOrThrow(generation)
        } catch {
            // The old C image that would not unmap is reported; the host goes on.
            events.emit(.failed, .plugin(generation.pluginID), "generation \(generation.number) did not end cleanly: \(error.message)")
        }
    }

    func endOrThrow(_ generation: PluginGeneration) throws(LoaderError) {
        // Instances its factories made go first, while its code is still there.
        let released = scopes.unloadProvider(plugin: generation.pluginID, generation: generation.number)
        if released > 0 {
            events.emit(.event, .plugin(generation.pluginID), "released \(released) scoped instance(s) of generation \(generation.number)")
        }
        switch try generation.end(waitingForWorker: isShuttingDown) {
        case .retired(let bytes):
            retire(bytes)
            events.emit(.retired, .plugin(generation.pluginID), "generation \(generation.number) retired (Swift image stays mapped)")
        case .unmapped:
            events.emit(.unloaded, .plugin(generation.pluginID), "generation \(generation.number) unloaded (dlclose verified with RTLD_NOLOAD)")
        case .workerEnded:
            events.emit(.unloaded, .plugin(generation.pluginID), "generation \(generation.number) unloaded (its worker ended)")
        case .workerEnding:
            events.emit(.unloaded, .plugin(generation.pluginID), "generation \(generation.number) unloaded (its worker stops in the background)")
        case .leftGroupWorker(let group):
            events.emit(.unloaded, .plugin(generation.pluginID), "generation \(generation.number) unloaded (the worker of group '\(group)' goes on for its other members)")
        }
    }

    private func retire(_ bytes: Int) {
        retiredGenerations += 1
        retiredBytes += bytes
        if let limit = retiredLimitBytes, retiredBytes > limit, retiredBytes - bytes <= limit {
            let megabytes = { (bytes: Int) in String(Double(bytes * 10 / (1024 * 1024)) / 10) }
            events.emit(.retiredLimitExceeded, .host, "retired Swift images hold \(megabytes(retiredBytes)) MB, over the \(megabytes(limit)) MB limit; a fresh process gives the memory back")
        }
    }

    /// Warns once per host (its generation maker), in one line, of what a worker's sandbox
    /// lacks here: Landlock (the kernel has none), or a namespace or limit it could not make.
    func warnIfUnconfined(_ status: SandboxStatus) {
        guard let because = status.unconfinedBecause, !warnedNoSandbox else { return }
        warnedNoSandbox = true
        if case .unavailable = status {
            events.emit(.failed, .host, "isolated plugins run without a file and network sandbox: \(because) (no_new_privs is set)")
        } else {
            events.emit(.failed, .host, "isolated plugins run in a weaker sandbox here: \(because)")
        }
    }

    /// Warns once per load that an in-process plugin's sandbox grants cannot be enforced.
    func warnUnenforceableGrants(of manifest: PluginManifest) {
        let grants = manifest.grantedCapabilities.filter(\.isSandboxGrant).sorted().map(\.rawValue)
        guard !grants.isEmpty else { return }
        events.emit(.event, .plugin(manifest.id), "runs in-process: \(grants.joined(separator: ", ")) cannot be enforced (only a worker process is sandboxed)")
    }
}
