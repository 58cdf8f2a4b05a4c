@_spi(Engine) import BerthCore
import Foundation

/// A plugin's life in the host: discovery into the registry, loading in dependency order,
/// deferring lazy plugins, unloading, a worker's failure, and (in `PluginLoader+Reload`)
/// reloading. `BerthHost` delegates its load, unload and reload operations here; this part
/// gets the registry, the generation maker, the navigator (to close and reopen screens at top
/// level) and the event log, never the host.
@MainActor
final class PluginLoader {
    let configuration: BerthHost.Configuration
    let registry: PluginRegistry
    let generations: GenerationMaker
    let navigator: Navigator
    let events: EventLog
    let runtimeDirectory: RuntimeDirectory
    /// How long the last reload took, host side (see `BerthHost.lastReloadDuration`).
    var lastReloadDuration: Duration?
    /// The phases of the last successful reload.
    var lastReloadTimings: ReloadTimings?
    /// The unprovided contracts already warned of: a later discovery repeats none.
    private var warnedContracts: Set<UnprovidedContract> = []
    /// Plugins whose next generation is being prepared or made off the main actor
    /// (`reloadOffMain`, `loadOffMain`): one at a time each, since both would write the same
    /// next generation's shadow copy and take the same number.
    var reloadsPreparing: Set<String> = []

    init(configuration: BerthHost.Configuration, registry: PluginRegistry, generations: GenerationMaker, navigator: Navigator,
         events: EventLog, runtimeDirectory: RuntimeDirectory) {
        self.configuration = configuration
        self.registry = registry
        self.generations = generations
        self.navigator = navigator
        self.events = events
        self.runtimeDirectory = runtimeDirectory
    }

    // MARK: Discovery

    /// Scans the plugins folders into the registry (see `BerthHost.discover`).
    func discover() -> DiscoveryResult {
        let result = PluginDiscovery.scan(configuration.pluginFolders, signatures: configuration.signatures)
        registry.rejected = result.rejected
        for problem in result.trustProblems {
            events.emit(.rejected, .trust, problem.description)
        }
        for plugin in result.plugins {
            if let record = registry[plugin.manifest.id] {
                record.source = plugin
            } else {
                add(plugin)
            }
        }
        for rejectedPlugin in result.rejected {
            for problem in rejectedPlugin.problems where problem.severity == .error {
                events.emit(.rejected, rejectedPlugin.id.map(HostEvent.Subject.plugin) ?? .folder(rejectedPlugin.folder), problem.description)
            }
        }
        for unprovided in result.unprovidedContracts where warnedContracts.insert(unprovided).inserted {
            events.emit(.warning, .plugin(unprovided.consumer), unprovided.message)
        }
        return result
    }

    /// Adds a newly found plugin to the registry, with its `discovered` event.
    private func add(_ plugin: ValidatedPlugin) {
        registry.add(plugin)
        events.emit(.discovered, .plugin(plugin.manifest.id), "discovered \(plugin.manifest.version) (\(plugin.manifest.runtime.rawValue)) in \(plugin.folder)")
    }

    /// The generation to use for `id` now (see `BerthHost.generationForUse`).
    func generationForUse(of id: String) throws(LoaderError) -> PluginGeneration? {
        switch try use(of: id) {
        case .ready(let generation): generation
        case .needsLoad: try load(id)
        }
    }

    /// `generationForUse`, loading a lazy or crashed plugin off the main actor (`loadOffMain`).
    func generationForUseOffMain(of id: String) async throws(LoaderError) -> PluginGeneration? {
        switch try use(of: id) {
        case .ready(let generation): generation
        case .needsLoad: try await loadOffMain(id)
        }
    }

    /// What using `id` now takes: its generation as it is (nil when it is not loaded and is
    /// not loaded on use), or a load first (a crashed plugin, or a deferred one); throws
    /// when its crash budget is spent.
    private func use(of id: String) throws(LoaderError) -> PluginUse {
        guard let record = registry[id] else { return .ready(nil) }
        if let generation = record.generation { return .ready(generation) }
        switch record.state {
        case .failed(let spent):
            throw LoaderError(.workerFailed, plugin: id, detail: "failed: \(spent); reload or load it again")
        case .crashed, .discovered where record.deferred:
            return .needsLoad
        case .discovered, .loaded:
            return .ready(nil)
        }
    }

    private enum PluginUse {
        case ready(PluginGeneration?)
        case needsLoad
    }

    /// A worker died or hung: at top level, its plugin's screens close by the usual close
    /// sequence, the generation ends, and the crash counts against the budget.
    func workerFailed(_ failure: WorkerFailure, generation number: Int) {
        navigator.enqueueHostWork { [weak self] in
            guard let self, let record = self.registry[failure.plugin], let generation = record.generation, generation.number == number else { return }
            self.events.emit(.crashed, .plugin(failure.plugin), failure.message)
            self.navigator.closeScreens(of: failure.plugin)
            let isolation = self.configuration.isolation
            let spent = record.workerCrashed(limit: isolation.crashLimit, window: isolation.crashWindow)
            self.generations.end(generation)
            if let spent {
                self.events.emit(.failed, .plugin(failure.plugin), "\(spent); it stays unloaded until it is reloaded or loaded again")
            }
        }
        // Crashed between calls (a task, or while idle): handle it now.
        if navigator.isIdle { navigator.topLevel {} }
    }

    // MARK: Load and unload

    /// Loads `id` and, first, everything it requires (see `BerthHost.load`).
    @discardableResult
    func load(_ id: String) throws(LoaderError) -> PluginGeneration {
        var failed: [String: LoaderError] = [:]
        return try load(id, failed: &failed)
    }

    /// Loads `id` after its requirements. A requirement that fails, now or earlier in the same
    /// pass (`failed`: each plugin is tried once), fails `id` with an error naming `id`, the
    /// requirement and why it did not load.
    /// Each plugin that does not load is one `failed` event, as `loadGeneration` emits it for
    /// its own failures.
    private func load(_ id: String, failed: inout [String: LoaderError]) throws(LoaderError) -> PluginGeneration {
        if let earlier = failed[id] { throw earlier }
        if let generation = registry[id]?.generation { return generation }
        guard let record = registry[id] else { throw LoaderError(.notFound, plugin: id, "no such plugin") }
        do throws(LoaderError) {
            do throws(LoaderError) {
                _ = try registry.loadOrder(for: id)  // a missing, out-of-range or cyclic requirement, named
                for requirement in record.source.manifest.requires {
                    do { _ = try load(requirement.id, failed: &failed) } catch {
                        throw Self.dependencyFailed(id, requires: requirement.id, error)
                    }
                }
            } catch {
                throw requirementsFailed(id, error)
            }
            try loadGeneration(of: id)
        } catch {
            failed[id] = error
            throw error
        }
        guard let generation = registry[id]?.generation else { preconditionFailure("a loaded plugin has a generation") }
        return generation
    }

    /// `id` did not load for want of a requirement: one `failed` event. A requirement's own
    /// requirement can be the one at fault: then it is named.
    func requirementsFailed(_ id: String, _ error: LoaderError) -> LoaderError {
        events.emit(.failed, .plugin(id), error.plugin == id ? error.message : "did not load: \(error.description)")
        return error
    }

    static func dependencyFailed(_ id: String, requires dependency: String, _ error: LoaderError) -> LoaderError {
        LoaderError(.dependencyFailed, plugin: id, "requires \(dependency), which did not load: \(error.message)")
    }

    /// Loads every discovered plugin; returns the errors of those that failed.
    func loadAll() -> [LoaderError] {
        loadEach(registry.records.keys.sorted()) { _ in false }
    }

    /// Loads `ids` in order, each plugin's requirements first, and returns one error per plugin
    /// that did not load. A plugin that failed is tried once: its dependents name its error.
    private func loadEach(_ ids: [String], deferring: (PluginRecord) -> Bool) -> [LoaderError] {
        var errors: [LoaderError] = []
        var failed: [String: LoaderError] = [:]
        for id in ids {
            guard let record = registry[id], record.generation == nil else { continue }
            if let earlier = failed[id] {
                errors.append(earlier)
                continue
            }
            if deferring(record) {
                record.deferUntilFirstUse()
                continue
            }
            do { _ = try load(id, failed: &failed) } catch { errors.append(error) }
        }
        return errors
    }

    /// Loads each eager plugin and defers each lazy one (see `BerthHost.activateDiscovered`).
    func activateDiscovered(lazy: Bool) -> [LoaderError] {
        loadEach(registry.records.keys.sorted()) { ($0.source.manifest.activation ?? (lazy ? .lazy : .eager)) == .lazy }
    }

    /// `unload`, once a task's post on the plugin's lane has ended (see `unloadOffMain`).
    func unloadOffMain(_ id: String) async throws(LoaderError) {
        if let generation = registry[id]?.generation { await generation.connection.hostCallsEnded() }
        try unload(id)
    }

    /// Closes every open screen of `id`, then ends its generation (see `BerthHost.unload`).
    /// It does not wait: a call on the plugin's lane, a task's post included, refuses it.
    func unload(_ id: String) throws(LoaderError) {
        guard let record = registry[id], let generation = record.generation else {
            throw LoaderError(.notLoaded, plugin: id, registry[id] == nil ? "no plugin has this id" : "not loaded")
        }
        let dependents = registry.loadedDependents(of: id)
        guard dependents.isEmpty else {
            throw LoaderError(.hasDependents, plugin: id, "\(dependents.joined(separator: ", ")) require(s) it; unload those first")
        }
        try Self.refuseWhileBusy(generation, "unload")
        try navigator.topLevel { () throws(LoaderError) in
            navigator.closeScreens(of: id)
            record.unloaded()
            try generations.endOrThrow(generation)
        }
    }

    /// A generation whose lane is in a call is not ended under it: its code is running (an
    /// in-process plugin's image would be unmapped beneath its own thread).
    static func refuseWhileBusy(_ generation: PluginGeneration, _ verb: String) throws(LoaderError) {
        guard let busy = generation.connection.callInTheWay else { return }
        throw LoaderError(.lifecycle, plugin: generation.pluginID,
                          "is busy: \(busy.function) (screen \(busy.screen)) has run for \(busy.elapsedMilliseconds) ms; \(verb) it once it returns")
    }

    /// Validates the plugin folder at `path`, adds it, and loads it (see `BerthHost.loadFolder`).
    @discardableResult
    func loadFolder(_ path: String) throws(LoaderError) -> PluginGeneration {
        let plugin = try Self.validatedFolder(path, signatures: configuration.signatures).get()
        if let loaded = try admit(plugin) { return loaded }
        return try load(plugin.manifest.id)
    }

    /// The plugin folder at `path`, validated; one line when it is not valid. Thread: any.
    nonisolated static func validatedFolder(_ path: String, signatures: SignaturePolicy) -> Result<ValidatedPlugin, LoaderError> {
        PluginValidator.validate(path: path, signatures: signatures).mapError { LoaderError(.invalid, plugin: path, $0.oneLine) }
    }

    /// Adds a validated folder's plugin (its record takes the new source when it is known and
    /// not loaded). Returns its generation when the same folder is loaded already; refused
    /// when another folder's plugin of that id is.
    func admit(_ plugin: ValidatedPlugin) throws(LoaderError) -> PluginGeneration? {
        let id = plugin.manifest.id
        guard let existing = registry[id] else {
            add(plugin)
            return nil
        }
        guard let generation = existing.generation else {
            existing.source = plugin
            return nil
        }
        // The same folder, already loaded (at start, say): left as it is, like `load(id)`.
        let folder = { (path: String) in URL(fileURLWithPath: path).standardizedFileURL.resolvingSymlinksInPath().path }
        guard folder(existing.source.folder) == folder(plugin.folder) else {
            throw LoaderError(.alreadyLoaded, plugin: id, "is already loaded from \(existing.source.folder)")
        }
        return generation
    }

    /// Forgets a plugin that is not loaded (its folder was removed).
    func forget(_ id: String) {
        guard registry[id]?.generation == nil else { return }
        registry.remove(id)
    }

    private func loadGeneration(of id: String) throws(LoaderError) {
        guard let record = registry[id] else { throw LoaderError(.notFound, plugin: id, "no such plugin") }
        do {
            if case .failed = record.state { record.clearCrashes() }
            if configuration.isolation.mode(for: record.source.manifest) == .process { moveGroupWorker(toAdmit: record.source) }
            record.loaded(try generations.make(record))
        } catch {
            events.emit(.failed, .plugin(id), error.message)
            throw error
        }
    }
}

extension PluginLoader: PluginFolderLoader {}
