@_spi(Engine) import BerthCore
/// A discovered plugin and its current generation.
@MainActor
package final class PluginRecord {
    /// Whether a discovered plugin is loaded, and if not, why.
    package enum State: Sendable, Equatable {
        /// Valid, not loaded.
        case discovered
        /// Loaded: a generation is in place.
        case loaded
        /// Its worker crashed; it starts again on its next use.
        case crashed
        /// Past its crash budget; refused until it is loaded again.
        case failed(CrashBudgetSpent)

        /// One word, as `plugins` shows it.
        package var name: String {
            switch self {
            case .discovered: "discovered"
            case .loaded: "loaded"
            case .crashed: "crashed"
            case .failed: "failed"
            }
        }
    }

    /// The validated folder (refreshed by discovery and reload).
    package internal(set) var source: ValidatedPlugin

    /// Where the plugin stands, each case with what only it has: a loaded plugin always has
    /// its generation, a failed one its reason, and only one that is not loaded waits for
    /// its first use. Changed only by the events below.
    private enum Stage {
        case discovered(lazy: Bool)
        case loaded(PluginGeneration)
        /// Its worker crashed, within the crash budget: it starts again on its next use.
        case crashed
        /// Past its crash budget: refused until it is loaded again.
        case failed(CrashBudgetSpent)
    }

    private var stage = Stage.discovered(lazy: false)
    /// Recent worker crashes (isolated plugins): the budget counts them across loads.
    private var crashes = CrashRecord()

    init(source: ValidatedPlugin) {
        self.source = source
    }

    /// The loaded generation, nil when not loaded.
    package var generation: PluginGeneration? {
        guard case .loaded(let generation) = stage else { return nil }
        return generation
    }

    /// Lazy activation: valid and not loaded yet; its first use (a route opened, an export
    /// called) loads it. Cleared by any load.
    package var deferred: Bool {
        guard case .discovered(lazy: true) = stage else { return false }
        return true
    }

    /// The state as `plugins` shows it: `discovered (lazy)` for a deferred plugin.
    package var stateName: String {
        deferred ? "discovered (lazy)" : state.name
    }

    /// Where the plugin stands: loaded, discovered, crashed (within its crash budget) or failed.
    package var state: State {
        switch stage {
        case .discovered: .discovered
        case .loaded: .loaded
        case .crashed: .crashed
        case .failed(let spent): .failed(spent)
        }
    }

    /// Worker crashes within the last `window` (the crash budget spends `crashLimit` of them
    /// in `crashWindow`: `IsolationSettings`); for an inspector.
    package func crashes(within window: Duration) -> Int {
        let now = ContinuousClock.now
        return crashes.times.filter { now - $0 <= window }.count
    }

    // MARK: Events

    /// `generation` is in place (a load, or a reload's new generation).
    func loaded(_ generation: PluginGeneration) {
        stage = .loaded(generation)
    }

    /// Left unloaded until its first use (lazy activation). Only a plugin that is not loaded.
    func deferUntilFirstUse() {
        guard case .discovered = stage else { preconditionFailure("only a discovered plugin waits for its first use") }
        stage = .discovered(lazy: true)
    }

    /// Unloaded on request: it stays unloaded until it is loaded again.
    func unloaded() {
        stage = .discovered(lazy: false)
    }

    /// Its worker died or hung: crashed, or failed once `limit` crashes fall within
    /// `window`. Returns the spent budget when that is so.
    func workerCrashed(limit: Int, window: Duration) -> CrashBudgetSpent? {
        guard crashes.record(limit: limit, window: window) else {
            stage = .crashed
            return nil
        }
        let spent = CrashBudgetSpent(crashes: limit, window: window)
        stage = .failed(spent)
        return spent
    }

    /// A crashed or failed plugin is given a fresh start (reloaded on request).
    func clearCrashes() {
        crashes.reset()
        if case .loaded = stage { return }
        stage = .discovered(lazy: false)
    }
}

/// Why a plugin failed: its worker crashed `crashes` times within `window`, its crash budget.
package struct CrashBudgetSpent: Sendable, Equatable, CustomStringConvertible {
    /// The crashes that spent the budget (the configured limit).
    package var crashes: Int
    /// The window they fell within.
    package var window: Duration

    /// `crashed 3 times in 300.0 seconds`.
    package var description: String { "crashed \(crashes) times in \(window)" }
}

/// The plugins a host knows, their dependency order, and the numbering of generations.
@MainActor
final class PluginRegistry {
    private(set) var records: [String: PluginRecord] = [:]
    /// Folders rejected by the last discovery.
    var rejected: [RejectedPlugin] = []
    private var generationCounters: [String: Int] = [:]

    subscript(id: String) -> PluginRecord? { records[id] }

    @discardableResult
    func add(_ plugin: ValidatedPlugin) -> PluginRecord {
        let record = PluginRecord(source: plugin)
        records[plugin.manifest.id] = record
        return record
    }

    func remove(_ id: String) {
        records[id] = nil
    }

    /// The next generation number of `id` (1 for its first load in this process).
    /// The number `nextGenerationNumber` would give `id` now, without taking it.
    func peekNextGenerationNumber(of id: String) -> Int {
        (generationCounters[id] ?? 0) + 1
    }

    func nextGenerationNumber(of id: String) -> Int {
        let number = (generationCounters[id] ?? 0) + 1
        generationCounters[id] = number
        return number
    }

    /// `id`'s dependencies in load order, ending with `id`. Errors name both plugins.
    func loadOrder(for id: String) throws(LoaderError) -> [String] {
        var order: [String] = []
        var visiting: [String] = []
        var placed: Set<String> = []
        try visit(id, requiredBy: nil, order: &order, placed: &placed, visiting: &visiting)
        return order
    }

    private func visit(_ id: String, requiredBy: (String, VersionRange)?, order: inout [String], placed: inout Set<String>,
                       visiting: inout [String]) throws(LoaderError) {
        if let start = visiting.firstIndex(of: id) {
            let cycle = (visiting[start...] + [id]).joined(separator: " → ")
            throw LoaderError(.dependencyCycle, plugin: visiting[start], "dependency cycle: \(cycle)")
        }
        guard let record = records[id] else {
            if let (dependent, range) = requiredBy {
                throw LoaderError(.dependencyMissing, plugin: dependent, "requires \(id) \(range) but \(id) is not installed or did not validate")
            }
            throw LoaderError(.notFound, plugin: id, "no such plugin")
        }
        if let (dependent, range) = requiredBy, !range.contains(record.source.manifest.version) {
            throw LoaderError(.dependencyVersion, plugin: dependent, "requires \(id) \(range) but \(id) is \(record.source.manifest.version)")
        }
        guard !placed.contains(id) else { return }
        visiting.append(id)
        for dependency in record.source.manifest.requires {
            try visit(dependency.id, requiredBy: (id, dependency.range), order: &order, placed: &placed, visiting: &visiting)
        }
        visiting.removeLast()
        order.append(id)
        placed.insert(id)
    }

    /// Loaded plugins that require `id`, sorted.
    func loadedDependents(of id: String) -> [String] {
        records.values
            .filter { $0.generation != nil && $0.source.manifest.requires.contains { $0.id == id } }
            .map(\.source.manifest.id)
            .sorted()
    }

    /// Loaded plugins, dependents before what they require.
    func unloadOrder() -> [String] {
        var order: [String] = []
        var placed: Set<String> = []
        for id in records.keys.sorted() where records[id]?.generation != nil {
            for dependency in (try? loadOrder(for: id)) ?? [id] where placed.insert(dependency).inserted {
                order.append(dependency)
            }
        }
        return order.reversed().filter { records[$0]?.generation != nil }
    }

    /// A reloaded manifest must still fit: what it requires is loaded in range, and every
    /// loaded plugin requiring it accepts its new version.
    func checkDependencies(of manifest: PluginManifest, generation: Int) throws(LoaderError) {
        let id = manifest.id
        for dependency in manifest.requires {
            guard let loaded = records[dependency.id]?.generation?.manifest.version, dependency.range.contains(loaded) else {
                throw LoaderError(.dependencyVersion, plugin: id,
                                  "reload failed at validate: requires \(dependency.id) \(dependency.range), which is not loaded in range; generation \(generation) stays loaded")
            }
        }
        for dependent in records.values where dependent.generation != nil {
            guard let range = dependent.source.manifest.requires.first(where: { $0.id == id })?.range else { continue }
            guard range.contains(manifest.version) else {
                throw LoaderError(.dependencyVersion, plugin: id,
                                  "reload failed at validate: \(dependent.source.manifest.id) requires \(id) \(range) but the new version is \(manifest.version); generation \(generation) stays loaded")
            }
        }
    }
}
