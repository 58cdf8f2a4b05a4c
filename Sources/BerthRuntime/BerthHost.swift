import Foundation
import Logging

/// The plugin host: finds plugins in its folders, loads them in dependency order, calls
/// their exports, and unloads or reloads them. Everything here runs on the main actor,
/// like a UI framework's main thread.
@MainActor
public final class BerthHost {
    /// How a host is set up.
    public struct Configuration: Sendable {
        /// Folders whose sub-folders are plugins .
        public var pluginFolders: [String]
        /// Parent of the per-process runtime folder; nil for the default.
        public var runtimeBase: String?
        /// Where persisted values live; nil keeps persistence off.
        public var stateDirectory: String?
        /// Where the host and its plugins log (plugin log lines included).
        public var logger: Logger
        /// Where plugins run, and the crash and hang policy for isolated ones.
        public var isolation: IsolationSettings
        /// Trusted signing keys, and whether only plugins signed by one of them load. Every
        /// validation (discovery, load, reload, watch) applies it before any code runs.
        public var signatures = SignaturePolicy()
        /// How many screens may be open, and how deep one stack may grow: a plugin that opens
        /// itself in a loop gets an error at the limit instead of growing the tree forever.
        public var screenLimits = ScreenLimits()

        /// The limits on open screens.
        public struct ScreenLimits: Sendable, Equatable {
            /// Screens open at once, across every stack.
            public var openScreens: Int
            /// Screens on one stack.
            public var stackDepth: Int
            /// Limits of `openScreens` open screens and `stackDepth` screens on a stack.
            public init(openScreens: Int = 1_000, stackDepth: Int = 64) {
                self.openScreens = openScreens
                self.stackDepth = stackDepth
            }
        }

        /// A configuration over `pluginFolders`; the other fields keep their defaults (no persistence, plugins where their manifests say, no signature required).
        public init(pluginFolders: [String], runtimeBase: String? = nil, stateDirectory: String? = nil, logger: Logger = Logger(label: "berth"),
                    isolation: IsolationSettings = IsolationSettings()) {
            self.pluginFolders = pluginFolders
            self.runtimeBase = runtimeBase
            self.stateDirectory = stateDirectory
            self.logger = logger
            self.isolation = isolation
        }
    }

    /// How the host was set up.
    public let configuration: Configuration
    /// This process's runtime folder (shadow copies, sockets). `package`: the CLI puts its
    /// restart file and watchdog beside it; an embedding application has no use for it.
    package let runtimeDirectory: RuntimeDirectory
    /// Plugins found so far, by id (loaded or not).
    let registry = PluginRegistry()
    /// Every plugin the host knows, by id; each record says whether it is loaded.
    public var plugins: [String: PluginRecord] { registry.records }
    /// Folders rejected by the last discovery.
    public var rejected: [RejectedPlugin] { registry.rejected }
    /// Swift generations retired (still mapped).
    public var retiredGenerations: Int { generations.retiredGenerations }
    /// The bytes of those retired images.
    public var retiredBytes: Int { generations.retiredBytes }
    /// Retired image bytes past which the host emits `retiredLimitExceeded` (nil: no limit).
    public var retiredLimitBytes: Int? {
        get { generations.retiredLimitBytes }
        set { generations.retiredLimitBytes = newValue }
    }
    let eventLog = EventLog()
    /// Everything that happened, in order (the most recent `EventLog.limit`).
    public var events: [HostEvent] { eventLog.events }
    /// How long the last reload took, host side: from taking the screens out to the new
    /// generation in place (validation before it and ending the old one after it excluded).
    public private(set) var lastReloadDuration: Duration?
    /// The phases of the last successful reload (also on its `reloaded` event).
    public private(set) var lastReloadTimings: ReloadTimings?
    /// Makes and ends generations, in process or in workers; counts retired images.
    private(set) lazy var generations = GenerationMaker(
        configuration: configuration, runtimeDirectory: runtimeDirectory, registry: registry, scopes: scopes, events: eventLog,
        pluginHost: self, onWorkerFailure: { [weak self] failure, number in self?.workerFailed(failure, generation: number) })
    /// The live workers of manifest groups, which their members' generations join.
    var workerGroups: WorkerGroups { generations.workerGroups }
    /// The plugins folders' watcher, while watching.
    private var watcher: PluginWatcher?

    /// The router tree, its transitions and the queue of work plugins ask for.
    package private(set) lazy var navigator: Navigator = {
        let activity = ScreenActivity()
        let screens = ScreenMaker(events: eventLog, activity: activity, openScreenLimit: configuration.screenLimits.openScreens,
                                  registry: registry, scopes: scopes, generations: self, pluginHost: self)
        return Navigator(events: eventLog, activity: activity, screens: screens, stackDepth: configuration.screenLimits.stackDepth)
    }()

    /// The database persisted values live in, when persistence is on.
    let persistentStore: PersistentStore?
    /// Whether values persist, and if not, why.
    public let persistenceStatus: PersistenceStatus
    /// Scoped services and the scopes alive now.
    public let scopes = ScopeRegistry()

    /// A host over `configuration`, with its runtime folder made and its state database open (persistence stays off, with the reason in `persistenceStatus`, when the database cannot be opened). Nothing is discovered or loaded yet: call `discover()`, then `load(_:)` or `activateDiscovered(lazy:)`.
    public init(configuration: Configuration) throws(LoaderError) {
        self.configuration = configuration
        self.runtimeDirectory = try RuntimeDirectory(base: configuration.runtimeBase)
        if let folder = configuration.stateDirectory {
            do {
                let store = try PersistentStore(folder: folder)
                persistentStore = store
                persistenceStatus = .on(path: store.path)
            } catch {
                // The host runs on with persistence off; the file is left untouched.
                persistentStore = nil
                persistenceStatus = .failed(path: (folder as NSString).appendingPathComponent(PersistentStore.fileName), error: "\(error)")
            }
        } else {
            persistentStore = nil
            persistenceStatus = .disabled
        }
    }

    // MARK: Discovery

    /// Scans the plugins folders. Loaded plugins keep their generation; a plugin that is
    /// now rejected stays loaded until it is unloaded or reloaded.
    @discardableResult
    public func discover() -> DiscoveryResult {
        let result = PluginDiscovery.scan(configuration.pluginFolders, signatures: configuration.signatures)
        registry.rejected = result.rejected
        for problem in result.trustProblems {
            emit(.rejected, .trust, problem.description)
        }
        for plugin in result.plugins {
            if let record = registry[plugin.manifest.id] {
                record.source = plugin
            } else {
                registry.add(plugin)
                emit(.discovered, .plugin(plugin.manifest.id), "discovered \(plugin.manifest.version) (\(plugin.manifest.runtime.rawValue)) in \(plugin.folder)")
            }
        }
        for rejectedPlugin in result.rejected {
            for problem in rejectedPlugin.problems where problem.severity == .error {
                emit(.rejected, rejectedPlugin.id.map(HostEvent.Subject.plugin) ?? .folder(rejectedPlugin.folder), problem.description)
            }
        }
        return result
    }

    /// The loaded generation of `id`, if any.
    public func generation(of id: String) -> PluginGeneration? {
        plugins[id]?.generation
    }

    /// The generation to use for `id` now: a plugin whose worker crashed is started again
    /// on its next use; one past its crash budget is refused until it is loaded again.
    public func generationForUse(of id: String) throws(LoaderError) -> PluginGeneration? {
        guard let record = plugins[id] else { return nil }
        if let generation = record.generation { return generation }
        switch record.state {
        case .failed(let spent):
            throw LoaderError(.workerFailed, plugin: id, detail: "failed: \(spent); reload or load it again")
        case .crashed:
            return try load(id)
        case .discovered where record.deferred:
            return try load(id)
        case .discovered, .loaded:
            return nil
        }
    }

    /// A worker died or hung: at top level, its plugin's screens close by the usual close
    /// sequence, the generation ends, and the crash counts against the budget.
    private func workerFailed(_ failure: WorkerFailure, generation number: Int) {
        navigator.enqueue { [weak self] in
            guard let self, let record = self.plugins[failure.plugin], let generation = record.generation, generation.number == number else { return }
            self.emit(.crashed, .plugin(failure.plugin), failure.message)
            self.navigator.closeScreens(of: failure.plugin)
            let isolation = self.configuration.isolation
            let spent = record.workerCrashed(limit: isolation.crashLimit, window: isolation.crashWindow)
            self.generations.end(generation)
            if let spent {
                self.emit(.failed, .plugin(failure.plugin), "\(spent); it stays unloaded until it is reloaded or loaded again")
            }
        }
        // Crashed between calls (a task, or while idle): handle it now.
        if navigator.isIdle { navigator.topLevel {} }
    }

    // MARK: Load, unload, reload

    /// Loads `id` and, first, everything it requires. A plugin already loaded is left as is.
    @discardableResult
    public func load(_ id: String) throws(LoaderError) -> PluginGeneration {
        for dependency in try registry.loadOrder(for: id) where plugins[dependency]?.generation == nil {
            try loadGeneration(of: dependency)
        }
        guard let generation = plugins[id]?.generation else { preconditionFailure("load order ends with the plugin itself") }
        return generation
    }

    /// Loads every discovered plugin; returns the errors of those that failed.
    public func loadAll() -> [LoaderError] {
        var errors: [LoaderError] = []
        for id in plugins.keys.sorted() where plugins[id]?.generation == nil {
            do { try load(id) } catch { errors.append(error) }
        }
        return errors
    }

    /// Makes every discovered plugin ready, as `berth run` does at start: loads each one
    /// whose activation is eager, and defers each lazy one (its manifest says so, or
    /// `lazy` is set and the manifest says nothing) until its first use. Returns the errors
    /// of those that failed to load.
    public func activateDiscovered(lazy: Bool = false) -> [LoaderError] {
        var errors: [LoaderError] = []
        for id in plugins.keys.sorted() {
            guard let record = plugins[id], record.generation == nil else { continue }
            if (record.source.manifest.activation ?? (lazy ? .lazy : .eager)) == .lazy {
                record.deferUntilFirstUse()
                continue
            }
            do { try load(id) } catch { errors.append(error) }
        }
        return errors
    }

    /// Unloads `id`: closes every open screen of it (full close sequence, deepest first),
    /// then retires (Swift) or closes (C) its image. Refused while a loaded plugin requires it.
    public func unload(_ id: String) throws(LoaderError) {
        guard let record = plugins[id], let generation = record.generation else {
            throw LoaderError(.notLoaded, plugin: id, plugins[id] == nil ? "no plugin has this id" : "not loaded")
        }
        let dependents = registry.loadedDependents(of: id)
        guard dependents.isEmpty else {
            throw LoaderError(.hasDependents, plugin: id, "\(dependents.joined(separator: ", ")) require(s) it; unload those first")
        }
        try topLevel { () throws(LoaderError) in
            navigator.closeScreens(of: id)
            record.unloaded()
            try generations.endOrThrow(generation)
        }
    }

    /// Reloads `id` from its folder: validates the files again, takes every open screen of
    /// the plugin out of its place (deactivate, removal events, destroy; deepest first),
    /// loads a new generation (fresh copy, fresh globals), reopens the same routes in the
    /// same places with fresh instances, then ends the old generation. If loading or any
    /// reopened screen fails, the screens go back to the old generation (still mapped)
    /// and the error names the step that failed.
    ///
    /// With `keepState`, every `@State` slot of a reopened screen is carried into its new
    /// instance (stateful hot reload); a slot whose type changed reads as its default, because
    /// its fingerprint no longer matches. Without it, state resets by the reopen rules and
    /// only persisted values remain.
    @discardableResult
    public func reload(_ id: String, keepState: Bool = false) throws(LoaderError) -> PluginGeneration {
        guard let record = plugins[id], let old = record.generation else {
            // A plugin whose worker crashed (or failed) is loaded afresh.
            if let record = plugins[id], record.state != .discovered {
                record.clearCrashes()
                return try load(id)
            }
            throw LoaderError(.notLoaded, plugin: id, plugins[id] == nil ? "no plugin has this id" : "not loaded")
        }
        let previousSource = record.source
        let started = ContinuousClock.now
        switch PluginValidator.validate(path: record.source.folder, signatures: configuration.signatures) {
        case .success(let plugin):
            guard plugin.manifest.id == id else {
                throw LoaderError(.invalid, plugin: id, "reload failed at validate: the manifest now says id '\(plugin.manifest.id)'; generation \(old.number) stays loaded")
            }
            try registry.checkDependencies(of: plugin.manifest, generation: old.number)
            record.source = plugin
        case .failure(let failure):
            throw LoaderError(.invalid, plugin: id, "reload failed at validate: \(failure.firstError?.description ?? "invalid"); generation \(old.number) stays loaded")
        }
        let validated = started.elapsed
        generations.lastCanaryDuration = .zero  // set by the trial load of the new generation, if it makes one
        return try topLevel { () throws(LoaderError) -> PluginGeneration in
            var transaction = ReloadTransaction(navigator: navigator, events: eventLog, record: record, old: old,
                                                previousSource: previousSource, keepState: keepState)
            let fresh = try transaction.commit({ () throws(LoaderError) in try generations.make(record) }, end: generations.end)
            let elapsed = started.elapsed
            var timings = transaction.timings
            timings.validate = validated
            timings.canary = generations.lastCanaryDuration
            timings.total = elapsed
            lastReloadDuration = elapsed
            lastReloadTimings = timings
            eventLog.emit(.reloaded, .plugin(id), .reloaded(from: old.number, to: fresh.number, screens: transaction.places.count),
                          reloadTimings: timings)
            generations.end(old)
            return fresh
        }
    }

    /// Ends every loaded generation and removes the runtime folder (host exit).
    public func shutdown() {
        for router in openRouters.reversed() where !router.isReleased { close(router) }
        scopes.endAll()
        for id in registry.unloadOrder() {
            try? unload(id)
        }
        runtimeDirectory.remove()
    }

    // MARK: Internals

    private func loadGeneration(of id: String) throws(LoaderError) {
        guard let record = plugins[id] else { throw LoaderError(.notFound, plugin: id, "no such plugin") }
        do {
            if case .failed = record.state { record.clearCrashes() }
            if configuration.isolation.mode(for: record.source.manifest) == .process { moveGroupWorker(toAdmit: record.source) }
            record.loaded(try generations.make(record))
        } catch {
            emit(.failed, .plugin(id), error.message)
            throw error
        }
    }

    nonisolated static func milliseconds(_ duration: Duration) -> String {
        let (seconds, attoseconds) = duration.components
        // Hundredths of a millisecond, formatted by hand (no String(format:) on a hot path).
        let hundredths = Int(seconds) * 100_000 + Int(attoseconds / 10_000_000_000_000)
        let fraction = hundredths % 100
        return "\(hundredths / 100).\(fraction < 10 ? "0" : "")\(fraction)"
    }

    /// `id`'s dependencies in load order, ending with `id`. Errors name both plugins.
    func loadOrder(for id: String) throws(LoaderError) -> [String] {
        try registry.loadOrder(for: id)
    }

    func emit(_ kind: HostEvent.Kind, _ subject: HostEvent.Subject, _ message: String) {
        eventLog.emit(kind, subject, message)
    }

    /// Subscribes to events, the host's one event stream: `observer` is called with each new
    /// event, after those who subscribed before it; returns a token for `removeEventObserver`.
    public func addEventObserver(_ observer: @escaping (HostEvent) -> Void) -> Int {
        eventLog.addObserver(observer)
    }

    /// Ends the subscription `token` names.
    public func removeEventObserver(_ token: Int) {
        eventLog.removeObserver(token)
    }

    /// Validates the plugin folder at `path` (anywhere on disk), adds it, and loads it.
    @discardableResult
    public func loadFolder(_ path: String) throws(LoaderError) -> PluginGeneration {
        let plugin: ValidatedPlugin
        switch PluginValidator.validate(path: path, signatures: configuration.signatures) {
        case .success(let valid): plugin = valid
        case .failure(let failure):
            throw LoaderError(.invalid, plugin: path, failure.oneLine)
        }
        let id = plugin.manifest.id
        if let existing = plugins[id] {
            if let generation = existing.generation {
                // The same folder, already loaded (at start, say): left as it is, like `load(id)`.
                let folder = { (path: String) in URL(fileURLWithPath: path).standardizedFileURL.resolvingSymlinksInPath().path }
                guard folder(existing.source.folder) == folder(plugin.folder) else {
                    throw LoaderError(.alreadyLoaded, plugin: id, "is already loaded from \(existing.source.folder)")
                }
                return generation
            }
            existing.source = plugin
        } else {
            registry.add(plugin)
            emit(.discovered, .plugin(id), "discovered \(plugin.manifest.version) (\(plugin.manifest.runtime.rawValue)) in \(plugin.folder)")
        }
        return try load(id)
    }

    /// Forgets the event log (long-running checks that open thousands of screens).
    /// `package`: for `berth conformance-check`; an application's log is bounded anyway.
    package func clearEvents() {
        eventLog.clear()
    }

    /// Adds an already validated plugin without loading it.
    /// The plugin under test replaces any same-id plugin found beside it. `package`: for
    /// `berth conformance-check`; an application adds a folder with `loadFolder`.
    package func adopt(_ plugin: ValidatedPlugin) {
        registry.add(plugin)
    }

    /// Forgets a plugin that is not loaded (its folder was removed).
    public func forget(_ id: String) {
        guard plugins[id]?.generation == nil else { return }
        registry.remove(id)
    }


    // MARK: Watching

    /// Watches the plugins folders: a folder that appears loads, a changed library or
    /// manifest reloads once its files are complete, a removed folder unloads.
    public func startWatching(debounce: Duration = .milliseconds(200), keepState: Bool = false) throws(WatchError) {
        watcher?.stop()
        watcher = try PluginWatcher.start(pluginFolders: configuration.pluginFolders, signatures: configuration.signatures,
                                          loader: self, events: eventLog, debounce: debounce, keepState: keepState)
    }

    /// Stops watching the plugins folders (nothing when not watching).
    public func stopWatching() {
        watcher?.stop()
        watcher = nil
    }
}

extension BerthHost: GenerationSupplier, PluginFolderLoader {}
