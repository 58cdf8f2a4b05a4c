@_spi(Engine) @_exported import BerthCore
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
        /// Worker groups the user consents to, by name: the plugin ids that may share that
        /// group's worker (`berth run --group NAME=ID,ID`). A plugin whose manifest names a
        /// group joins it only when listed here, or, for a group not listed here, when it and
        /// every member are signed by one trusted key; otherwise it runs alone.
        public var groups: [String: Set<String>] = [:]

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
    package var plugins: [String: PluginRecord] { registry.records }
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
    /// When this host was made: a generation's `loadedAt` after it says how long its plugin
    /// waited for activation (a lazy plugin loads at its first use).
    public let startedAt = ContinuousClock.now
    /// How long the last reload took, host side: from taking the screens out to the new
    /// generation in place (validation before it and ending the old one after it excluded).
    public var lastReloadDuration: Duration? { loader.lastReloadDuration }
    /// The phases of the last successful reload (also on its `reloaded` event).
    public var lastReloadTimings: ReloadTimings? { loader.lastReloadTimings }
    /// Makes and ends generations, in process or in workers; counts retired images.
    private(set) lazy var generations: GenerationMaker = GenerationMaker(
        configuration: configuration, runtimeDirectory: runtimeDirectory, registry: registry, scopes: scopes, events: eventLog,
        pluginHost: self, onWorkerFailure: { [weak self] failure, number in self?.loader.workerFailed(failure, generation: number) })
    /// Discovery, load, unload, reload and a worker's failure.
    private lazy var loader: PluginLoader = PluginLoader(configuration: configuration, registry: registry, generations: generations, navigator: navigator,
                                           events: eventLog, runtimeDirectory: runtimeDirectory)
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
    /// Scoped services and the scopes alive now. `package`: the CLI and the inspector read it;
    /// an application sees plugins and screens as values.
    package let scopes = ScopeRegistry()
    /// The `changes` sequences being iterated, ended at shutdown.
    let changeFeeds = HostChangeFeeds()

    /// A host over `configuration`, with its runtime folder made and its state database open (persistence stays off, with the reason in `persistenceStatus`, when the database cannot be opened). Nothing is discovered or loaded yet: call `discover()`, then `load(_:)` or `activateDiscovered(lazy:)`.
    public init(configuration: Configuration) throws(LoaderError) {
        self.configuration = configuration
        scopes.contractTimeout.withLock { $0 = configuration.isolation.serviceCallTimeout }
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
    public func discover() -> DiscoveryResult { loader.discover() }

    /// The loaded generation of `id`, if any. `@_spi(Engine) public` for the benchmarks (a
    /// package of their own); an application reads `pluginSnapshot(_:)` and calls exports
    /// with `call(_:of:arguments:)`.
    @_spi(Engine) public func generation(of id: String) -> PluginGeneration? {
        plugins[id]?.generation
    }

    /// The generation to use for `id` now: a plugin whose worker crashed is started again
    /// on its next use; one past its crash budget is refused until it is loaded again.
    package func generationForUse(of id: String) throws(LoaderError) -> PluginGeneration? {
        try loader.generationForUse(of: id)
    }

    /// `generationForUse`, with a lazy or crashed plugin loaded off the main actor.
    package func generationForUseOffMain(of id: String) async throws(LoaderError) -> PluginGeneration? {
        try await loader.generationForUseOffMain(of: id)
    }

    /// A crashed provider's next use by a contract call (`PluginFacingHost`): started again
    /// within its crash budget, as an `open` would start it.
    func startAgainAfterCrash(_ plugin: String) -> CrashedProviderStart {
        switch registry[plugin]?.state {
        case .crashed?, .failed?:
            do {
                return try loader.generationForUse(of: plugin) == nil ? .refused("it did not start again") : .started
            } catch {
                return .refused(error.message)
            }
        default:
            return .notCrashed
        }
    }

    // MARK: Load, unload, reload

    /// Loads `id` and, first, everything it requires. A plugin already loaded is left as is.
    @discardableResult
    /// `@_spi(Engine) public` for the benchmarks; an application uses `activateDiscovered`.
    @_spi(Engine) public func load(_ id: String) throws(LoaderError) -> PluginGeneration { try loader.load(id) }

    /// `load`, with each new generation made off the main actor: the trial load, the image's
    /// `dlopen` and handshake (on the plugin's own lane) or the worker's start and `hello`
    /// run while the host's other screens, front ends and commands go on; what the plugin's
    /// entry asks of the host is answered on the main actor meanwhile. The registry records
    /// the generation on the main actor once it is ready. A second load or reload of the same
    /// plugin meanwhile is refused. The generation's number and state are in `pluginSnapshot(id)`.
    public func loadOffMain(_ id: String) async throws(LoaderError) {
        try await loadGenerationOffMain(id)
    }

    /// `loadOffMain`, returning the new generation.
    @discardableResult
    package func loadGenerationOffMain(_ id: String) async throws(LoaderError) -> PluginGeneration {
        try await loader.loadOffMain(id)
    }

    /// `loadFolder`, the folder validated on a thread of its own and the generation made off
    /// the main actor, as `loadOffMain` makes it.
    @discardableResult
    package func loadFolderOffMain(_ path: String) async throws(LoaderError) -> PluginGeneration {
        try await loader.loadFolderOffMain(path)
    }

    /// Loads every discovered plugin; returns the errors of those that failed.
    public func loadAll() -> [LoaderError] { loader.loadAll() }

    /// Makes every discovered plugin ready, as `berth run` does at start: loads each one
    /// whose activation is eager, and defers each lazy one (its manifest says so, or
    /// `lazy` is set and the manifest says nothing) until its first use. Returns the errors
    /// of those that failed to load.
    public func activateDiscovered(lazy: Bool = false) -> [LoaderError] { loader.activateDiscovered(lazy: lazy) }

    /// Unloads `id`: closes every open screen of it (full close sequence, deepest first),
    /// then retires (Swift) or closes (C) its image. Refused while a loaded plugin requires it.
    /// A synchronous call: a task's post on the plugin's lane is waited for first, a while
    /// (the main actor blocks); a front end uses `unloadOffMain`.
    public func unload(_ id: String) throws(LoaderError) {
        generation(of: id)?.connection.waitForHostCall()
        try loader.unload(id)
    }

    /// `unload`, awaiting a task's post on the plugin's lane instead of blocking for it: the
    /// host goes on meanwhile. Refused, as `unload` is, while a person's call runs there.
    public func unloadOffMain(_ id: String) async throws(LoaderError) { try await loader.unloadOffMain(id) }

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
    /// `@_spi(Engine) public` for the benchmarks; an application uses `reloadOffMain`.
    @_spi(Engine) public func reload(_ id: String, keepState: Bool = false) throws(LoaderError) -> PluginGeneration {
        generation(of: id)?.connection.waitForHostCall()
        return try loader.reload(id, keepState: keepState)
    }

    /// `reload`, with the folder's validation and the new generation's shadow copy (the
    /// library read and hashed) on a thread of their own, and the new generation made off
    /// the main actor before any screen is touched (its trial load, its image's open and
    /// handshake on its own lane, or its worker's start and `hello`): the host goes on
    /// meanwhile (other plugins' screens, keys, commands), and the main actor then only
    /// swaps the generations (the old screens out, the new ones in, or the rollback). A new
    /// generation that fails to load leaves the old one and its screens running.
    /// The new generation's number and state are in `pluginSnapshot(id)`.
    public func reloadOffMain(_ id: String, keepState: Bool = false) async throws(LoaderError) {
        try await reloadGenerationOffMain(id, keepState: keepState)
    }

    /// `reloadOffMain`, returning the new generation (for `berth`'s `reload --json`).
    @discardableResult
    package func reloadGenerationOffMain(_ id: String, keepState: Bool = false) async throws(LoaderError) -> PluginGeneration {
        try await loader.reloadOffMain(id, keepState: keepState)
    }

    /// Validates the plugin folder at `path` (anywhere on disk), adds it, and loads it.
    @discardableResult
    package func loadFolder(_ path: String) throws(LoaderError) -> PluginGeneration { try loader.loadFolder(path) }

    /// Forgets a plugin that is not loaded (its folder was removed).
    public func forget(_ id: String) { loader.forget(id) }

    /// Adds an already validated plugin without loading it.
    /// The plugin under test replaces any same-id plugin found beside it. `package`: for
    /// `berth conformance-check`; an application puts the folder in `pluginFolders`.
    package func adopt(_ plugin: ValidatedPlugin) {
        registry.add(plugin)
    }

    /// Returns once every worker whose last plugin was unloaded has ended (they end in the
    /// background, `Docs/lanes.md`). `@_spi(Engine)`: a benchmark of a worker's start and end.
    @_spi(Engine) public func waitForEndingWorkers() { generations.workerPool.waitForEndingWorkers() }

    /// Ends every loaded generation and removes the runtime folder (host exit).
    public func shutdown() {
        generations.isShuttingDown = true
        for router in openRouters.reversed() where !router.isReleased { close(router) }
        scopes.endAll()
        for id in registry.unloadOrder() {
            try? unload(id)
        }
        generations.workerPool.drain()
        runtimeDirectory.remove()
        changeFeeds.endAll()
    }

    // MARK: Events

    nonisolated static func milliseconds(_ duration: Duration) -> String {
        let (seconds, attoseconds) = duration.components
        // Hundredths of a millisecond, formatted by hand (no String(format:) on a hot path).
        let hundredths = Int(seconds) * 100_000 + Int(attoseconds / 10_000_000_000_000)
        let fraction = hundredths % 100
        return "\(hundredths / 100).\(fraction < 10 ? "0" : "")\(fraction)"
    }

    func emit(_ kind: HostEvent.Kind, _ subject: HostEvent.Subject, _ message: String) {
        eventLog.emit(kind, subject, message)
    }

    /// Subscribes to events, the host's one event stream: `observer` is called with each new
    /// event, after those who subscribed before it; returns a token for `removeEventObserver`.
    package func addEventObserver(_ observer: @escaping (HostEvent) -> Void) -> Int {
        eventLog.addObserver(observer)
    }

    /// Ends the subscription `token` names.
    package func removeEventObserver(_ token: Int) {
        eventLog.removeObserver(token)
    }

    /// Forgets the event log (long-running checks that open thousands of screens).
    /// `package`: for `berth conformance-check`; an application's log is bounded anyway.
    package func clearEvents() {
        eventLog.clear()
    }

    // MARK: Watching

    /// Watches the plugins folders: a folder that appears loads, a changed library or
    /// manifest reloads once its files are complete, a removed folder unloads.
    public func startWatching(debounce: Duration = .milliseconds(200), keepState: Bool = false) throws(WatchError) {
        watcher?.stop()
        watcher = try PluginWatcher.start(pluginFolders: configuration.pluginFolders, signatures: configuration.signatures,
                                          loader: loader, events: eventLog, debounce: debounce, keepState: keepState)
    }

    /// Stops watching the plugins folders (nothing when not watching).
    public func stopWatching() {
        watcher?.stop()
        watcher = nil
    }
}

extension BerthHost: GenerationSupplier {}
