import Foundation
import Logging

/// The plugin host: finds plugins in its folders, loads them in dependency order, calls
/// their exports, and unloads or reloads them. Everything here runs on the main actor,
/// like a UI framework's main thread.
@MainActor
public final class BerthHost {
    /// How a host is set up.
    public struct Configuration: Sendable {
        /// Folders whose sub-folders are plugins (`--plugins`, repeatable).
        public var pluginFolders: [String]
        /// Parent of the per-process runtime folder; nil for the default.
        public var runtimeBase: String?
        /// Where persisted values live (`--state-dir`); nil keeps persistence off.
        public var stateDirectory: String?
        public var logger: Logger

        public init(pluginFolders: [String], runtimeBase: String? = nil, stateDirectory: String? = nil, logger: Logger = Logger(label: "berth")) {
            self.pluginFolders = pluginFolders
            self.runtimeBase = runtimeBase
            self.stateDirectory = stateDirectory
            self.logger = logger
        }
    }

    public let configuration: Configuration
    public let runtimeDirectory: RuntimeDirectory
    /// Plugins found by the last discovery, by id (loaded or not).
    public private(set) var plugins: [String: PluginRecord] = [:]
    /// Folders rejected by the last discovery.
    public private(set) var rejected: [RejectedPlugin] = []
    /// Swift generations retired (still mapped) and their bytes.
    public private(set) var retiredGenerations = 0
    public private(set) var retiredBytes = 0
    /// Everything that happened, in order (the `events` command).
    public private(set) var events: [HostEvent] = []
    /// Events ever emitted; the log keeps the most recent `eventLogLimit`.
    private var eventCount = 0
    static let eventLogLimit = 10_000
    /// Called for every new event (the CLI prints them as they happen).
    public var onEvent: ((HostEvent) -> Void)?
    /// More subscribers (`events --follow` clients), by token.
    private var eventObservers: [Int: (HostEvent) -> Void] = [:]
    private var nextObserverToken = 1
    /// Retired image bytes past which the host warns and suggests `restart` (nil: no limit).
    public var retiredLimitBytes: Int? = 256 * 1024 * 1024
    /// How long the last reload took, host side: from taking the screens out to the new
    /// generation in place (validation before it and ending the old one after it excluded).
    public private(set) var lastReloadDuration: Duration?
    /// Instance state saved by the screens of a reload in progress (`save_state`), by router.
    var savedInstanceState: [Int: [UInt8]] = [:]
    /// The watcher and its pending checks, while `--watch` is on.
    var watchState: WatchState?

    /// The root of the router tree, retained for the host's whole life.
    public let launchRouter: Router
    /// The launch router's navigation stack.
    let launchStack: NavigationStack
    var nextRouterID = 1
    var nextStackID = 1
    /// Work plugins asked for during a call (navigation, delegate deliveries), run in
    /// order once the host is back at top level, so a plugin is never re-entered mid-call.
    var pendingWork: [() -> Void] = []
    var topLevelDepth = 0
    var isDraining = false
    private var generationCounters: [String: Int] = [:]

    /// The database persisted values live in, when persistence is on.
    let persistentStore: PersistentStore?
    /// Whether values persist, and if not, why.
    public let persistenceStatus: PersistenceStatus
    /// Scoped services and the scopes alive now.
    public let scopes = ScopeRegistry()

    public init(configuration: Configuration) throws(LoaderError) {
        self.configuration = configuration
        self.runtimeDirectory = try RuntimeDirectory(base: configuration.runtimeBase)
        self.launchRouter = Router(id: 0, kind: .launch)
        self.launchStack = NavigationStack(id: 0, presenter: nil)
        if let folder = configuration.stateDirectory {
            do {
                let store = try PersistentStore(folder: folder)
                persistentStore = store
                persistenceStatus = .on(path: store.path)
            } catch {
                // The host runs on with persistence off; the file is left untouched.
                persistentStore = nil
                persistenceStatus = .failed(reason: "\((folder as NSString).appendingPathComponent(PersistentStore.fileName)): \(error)")
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
        let result = PluginDiscovery.scan(configuration.pluginFolders)
        rejected = result.rejected
        for plugin in result.plugins {
            if let record = plugins[plugin.manifest.id] {
                record.source = plugin
            } else {
                plugins[plugin.manifest.id] = PluginRecord(source: plugin)
                emit(.discovered, plugin.manifest.id, "discovered \(plugin.manifest.version) (\(plugin.manifest.runtime.rawValue)) in \(plugin.folder)")
            }
        }
        for rejectedPlugin in result.rejected {
            for problem in rejectedPlugin.problems where problem.severity == .error {
                emit(.rejected, rejectedPlugin.id ?? rejectedPlugin.folder, problem.description)
            }
        }
        return result
    }

    /// The loaded generation of `id`, if any.
    public func generation(of id: String) -> PluginGeneration? {
        plugins[id]?.generation
    }

    // MARK: Load, unload, reload

    /// Loads `id` and, first, everything it requires. A plugin already loaded is left as is.
    @discardableResult
    public func load(_ id: String) throws(LoaderError) -> PluginGeneration {
        for dependency in try loadOrder(for: id) where plugins[dependency]?.generation == nil {
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

    /// Unloads `id`: closes every open screen of it (full close sequence, deepest first),
    /// then retires (Swift) or closes (C) its image. Refused while a loaded plugin requires it.
    public func unload(_ id: String) throws(LoaderError) {
        guard let record = plugins[id], let generation = record.generation else {
            throw LoaderError(.notLoaded, plugin: id, "is not loaded")
        }
        let dependents = loadedDependents(of: id)
        guard dependents.isEmpty else {
            throw LoaderError(.hasDependents, plugin: id, "\(dependents.joined(separator: ", ")) require(s) it; unload those first")
        }
        try topLevel { () throws(LoaderError) in
            closeScreens(of: id)
            record.generation = nil
            try end(generation)
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
            throw LoaderError(.notLoaded, plugin: id, "is not loaded")
        }
        let previousSource = record.source
        switch PluginValidator.validate(path: record.source.folder) {
        case .success(let plugin):
            guard plugin.manifest.id == id else {
                throw LoaderError(.invalid, plugin: id, "reload failed at validate: the manifest now says id '\(plugin.manifest.id)'; generation \(old.number) stays loaded")
            }
            try checkDependencies(of: plugin.manifest, generation: old.number)
            record.source = plugin
        case .failure(let failure):
            throw LoaderError(.invalid, plugin: id, "reload failed at validate: \(failure.problems.first?.description ?? "invalid"); generation \(old.number) stays loaded")
        }
        let started = ContinuousClock.now
        return try topLevel { () throws(LoaderError) -> PluginGeneration in
            let places = routers(of: id)
            savedInstanceState = [:]
            defer { savedInstanceState = [:] }
            let saved = takeOutInstances(of: places)
            let carried = keepState ? saved : [:]
            let fresh: PluginGeneration
            do throws(LoaderError) {
                fresh = try makeGeneration(of: record)
            } catch {
                record.source = previousSource
                putBackInstances(of: places, from: old, restoring: saved)
                emit(.failed, id, "reload failed at load: \(error.message); rolled back to generation \(old.number)")
                throw LoaderError(error.code, plugin: id, "reload failed at load: \(error.message); rolled back to generation \(old.number)")
            }
            do throws(ScreenError) {
                try reopenInstances(of: places, from: fresh, restoring: carried)
            } catch {
                takeOutInstances(of: places, keepSaved: true)
                try? end(fresh)
                record.source = previousSource
                putBackInstances(of: places, from: old, restoring: saved)
                emit(.failed, id, "reload failed at reopen: \(error.message); rolled back to generation \(old.number)")
                throw LoaderError(.invalid, plugin: id, "reload failed at reopen: \(error.message); rolled back to generation \(old.number)")
            }
            record.generation = fresh
            let elapsed = ContinuousClock.now - started
            lastReloadDuration = elapsed
            emit(.reloaded, id, "generation \(old.number) → \(fresh.number) in \(Self.milliseconds(elapsed)) ms, \(places.count) screen(s) reopened")
            do throws(LoaderError) {
                try end(old)
            } catch {
                // The reload succeeded; an old C image that would not unmap is reported.
                emit(.failed, id, "generation \(old.number) did not end cleanly: \(error.message)")
            }
            return fresh
        }
    }

    /// Ends every loaded generation and removes the runtime folder (host exit).
    public func shutdown() {
        for router in openRouters.reversed() where !router.isReleased { close(router) }
        scopes.endAll()
        for id in unloadOrder() {
            try? unload(id)
        }
        runtimeDirectory.remove()
    }

    // MARK: Internals

    private func loadGeneration(of id: String) throws(LoaderError) {
        guard let record = plugins[id] else { throw LoaderError(.notFound, plugin: id, "no such plugin") }
        do {
            record.generation = try makeGeneration(of: record)
        } catch {
            emit(.failed, id, error.message)
            throw error
        }
    }

    /// A reloaded manifest must still fit: what it requires is loaded in range, and every
    /// loaded plugin requiring it accepts its new version.
    private func checkDependencies(of manifest: PluginManifest, generation: Int) throws(LoaderError) {
        let id = manifest.id
        for dependency in manifest.requires {
            guard let loaded = plugins[dependency.id]?.generation?.manifest.version, dependency.range.contains(loaded) else {
                throw LoaderError(.dependencyVersion, plugin: id,
                                  "reload failed at validate: requires \(dependency.id) \(dependency.range), which is not loaded in range; generation \(generation) stays loaded")
            }
        }
        for dependent in plugins.values where dependent.generation != nil {
            guard let range = dependent.source.manifest.requires.first(where: { $0.id == id })?.range else { continue }
            guard range.contains(manifest.version) else {
                throw LoaderError(.dependencyVersion, plugin: id,
                                  "reload failed at validate: \(dependent.source.manifest.id) requires \(id) \(range) but the new version is \(manifest.version); generation \(generation) stays loaded")
            }
        }
    }

    private func makeGeneration(of record: PluginRecord) throws(LoaderError) -> PluginGeneration {
        let id = record.source.manifest.id
        let number = (generationCounters[id] ?? 0) + 1
        generationCounters[id] = number
        let generation: PluginGeneration
        do {
            generation = try PluginGeneration(
                plugin: record.source, number: number, runtimeDirectory: runtimeDirectory,
                logger: configuration.logger, host: self, onRetire: { bytes in
                    retire(bytes)
                    emit(.retired, id, "generation \(number) retired after a failed load (Swift image stays mapped)")
                }
            )
        } catch {
            // Its entry may have registered services before the load failed.
            scopes.unloadProvider(plugin: id, generation: number)
            throw error
        }
        emit(.loaded, id, "generation \(number) loaded (\(record.source.manifest.runtime.rawValue), ABI \(generation.table.abi))")
        return generation
    }

    private func end(_ generation: PluginGeneration) throws(LoaderError) {
        // Instances its factories made go first, while its image is still loaded.
        releaseServices(of: generation)
        let retired = try generation.end()
        if retired > 0 {
            retire(retired)
            emit(.retired, generation.pluginID, "generation \(generation.number) retired (Swift image stays mapped)")
        } else {
            emit(.unloaded, generation.pluginID, "generation \(generation.number) unloaded (dlclose verified with RTLD_NOLOAD)")
        }
    }

    private func retire(_ bytes: Int) {
        retiredGenerations += 1
        retiredBytes += bytes
        if let limit = retiredLimitBytes, retiredBytes > limit, retiredBytes - bytes <= limit {
            let megabytes = { (bytes: Int) in String(Double(bytes * 10 / (1024 * 1024)) / 10) }
            emit(.failed, "host", "retired Swift images hold \(megabytes(retiredBytes)) MB, over the \(megabytes(limit)) MB limit: run `berth restart` to start a fresh process (persisted state and open screens are kept)")
        }
    }

    static func milliseconds(_ duration: Duration) -> String {
        let (seconds, attoseconds) = duration.components
        // Hundredths of a millisecond, formatted by hand (no String(format:) on a hot path).
        let hundredths = Int(seconds) * 100_000 + Int(attoseconds / 10_000_000_000_000)
        let fraction = hundredths % 100
        return "\(hundredths / 100).\(fraction < 10 ? "0" : "")\(fraction)"
    }

    /// `id`'s dependencies in load order, ending with `id`. Errors name both plugins.
    func loadOrder(for id: String) throws(LoaderError) -> [String] {
        var order: [String] = []
        var path: [String] = []
        try visit(id, requiredBy: nil, order: &order, path: &path)
        return order
    }

    private func visit(_ id: String, requiredBy: (String, VersionRange)?, order: inout [String], path: inout [String]) throws(LoaderError) {
        if let start = path.firstIndex(of: id) {
            let cycle = (path[start...] + [id]).joined(separator: " → ")
            throw LoaderError(.dependencyCycle, plugin: path[start], "dependency cycle: \(cycle)")
        }
        guard let record = plugins[id] else {
            if let (dependent, range) = requiredBy {
                throw LoaderError(.dependencyMissing, plugin: dependent, "requires \(id) \(range) but \(id) is not installed or did not validate")
            }
            throw LoaderError(.notFound, plugin: id, "no such plugin (try `plugins` to list them)")
        }
        if let (dependent, range) = requiredBy, !range.contains(record.source.manifest.version) {
            throw LoaderError(.dependencyVersion, plugin: dependent,
                              "requires \(id) \(range) but \(id) is \(record.source.manifest.version)")
        }
        guard !order.contains(id) else { return }
        path.append(id)
        for dependency in record.source.manifest.requires {
            try visit(dependency.id, requiredBy: (id, dependency.range), order: &order, path: &path)
        }
        path.removeLast()
        order.append(id)
    }

    private func loadedDependents(of id: String) -> [String] {
        plugins.values
            .filter { $0.generation != nil && $0.source.manifest.requires.contains { $0.id == id } }
            .map(\.source.manifest.id)
            .sorted()
    }

    /// Loaded plugins, dependents before what they require.
    private func unloadOrder() -> [String] {
        var order: [String] = []
        for id in plugins.keys.sorted() where plugins[id]?.generation != nil {
            for dependency in (try? loadOrder(for: id)) ?? [id] where !order.contains(dependency) {
                order.append(dependency)
            }
        }
        return order.reversed().filter { plugins[$0]?.generation != nil }
    }

    func emit(_ kind: HostEvent.Kind, _ subject: String, _ message: String) {
        eventCount += 1
        let event = HostEvent(sequence: eventCount, kind: kind, subject: subject, message: message)
        events.append(event)
        // A long-running host keeps the recent log only (sequence numbers keep counting).
        if events.count > Self.eventLogLimit { events.removeFirst(events.count - Self.eventLogLimit / 2) }
        onEvent?(event)
        for observer in eventObservers.values { observer(event) }
    }

    /// Subscribes to events; returns a token for `removeEventObserver`.
    public func addEventObserver(_ observer: @escaping (HostEvent) -> Void) -> Int {
        defer { nextObserverToken += 1 }
        eventObservers[nextObserverToken] = observer
        return nextObserverToken
    }

    public func removeEventObserver(_ token: Int) {
        eventObservers[token] = nil
    }

    /// Validates the plugin folder at `path` (anywhere on disk), adds it, and loads it.
    @discardableResult
    public func loadFolder(_ path: String) throws(LoaderError) -> PluginGeneration {
        let plugin: ValidatedPlugin
        switch PluginValidator.validate(path: path) {
        case .success(let valid): plugin = valid
        case .failure(let failure):
            throw LoaderError(.invalid, plugin: path, failure.problems.map(\.description).joined(separator: "; "))
        }
        let id = plugin.manifest.id
        if let existing = plugins[id] {
            guard existing.generation == nil else { throw LoaderError(.alreadyLoaded, plugin: id, "is already loaded from \(existing.source.folder)") }
            existing.source = plugin
        } else {
            plugins[id] = PluginRecord(source: plugin)
            emit(.discovered, id, "discovered \(plugin.manifest.version) (\(plugin.manifest.runtime.rawValue)) in \(plugin.folder)")
        }
        return try load(id)
    }

    /// Forgets the event log (long-running checks that open thousands of screens).
    package func clearEvents() {
        events.removeAll()
    }

    /// Adds an already validated plugin without loading it.
    /// The plugin under test replaces any same-id plugin found beside it.
    package func adopt(_ plugin: ValidatedPlugin) {
        plugins[plugin.manifest.id] = PluginRecord(source: plugin)
    }

    /// Forgets a plugin that is not loaded (its folder was removed).
    public func forget(_ id: String) {
        guard plugins[id]?.generation == nil else { return }
        plugins[id] = nil
    }
}

/// A discovered plugin and its current generation.
@MainActor
public final class PluginRecord {
    /// The validated folder (refreshed by discovery and reload).
    public internal(set) var source: ValidatedPlugin
    /// The loaded generation, nil when not loaded.
    public internal(set) var generation: PluginGeneration?

    init(source: ValidatedPlugin) {
        self.source = source
    }

    /// `discovered` (valid, not loaded) or `loaded`.
    public var state: String { generation == nil ? "discovered" : "loaded" }
}

/// One line of the host's event log.
public struct HostEvent: Sendable, CustomStringConvertible {
    public enum Kind: String, Sendable {
        case discovered, rejected, loaded, reloaded, retired, unloaded, failed
        case created, activated, deactivated, released, event
    }

    public var sequence: Int
    public var kind: Kind
    /// The plugin id, screen or folder the event is about.
    public var subject: String
    public var message: String

    public var description: String { "\(subject): \(message)" }
}
