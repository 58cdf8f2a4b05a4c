@_spi(Engine) import BerthCore
import Foundation

/// Reloading a plugin: validate its folder again, then a `ReloadTransaction` takes its
/// screens out, loads the new generation and reopens them (or rolls back).
extension PluginLoader {
    /// The plugins the registry knows, by id (what a watcher matches folders against).
    var plugins: [String: PluginRecord] { registry.records }

    /// Reloads `id` from its folder (see `BerthHost.reload`).
    @discardableResult
    func reload(_ id: String, keepState: Bool) throws(LoaderError) -> PluginGeneration {
        try refuseWhilePreparing(id)
        guard let (record, old) = try replaced(id) else { return try loadAfresh(id) }
        let started = ContinuousClock.now
        let validation = PluginValidator.validate(path: record.source.folder, signatures: configuration.signatures)
        return try replace(record, old, with: validation, keepState: keepState, started: started)
    }

    /// `reload`, with the validation and the new generation's shadow copy (reading and
    /// hashing the library) on a thread of their own: the main actor goes on meanwhile, and
    /// then only swaps the generations (`replace`). `validated`: the folder as a watcher
    /// already validated it off the main actor.
    @discardableResult
    func reloadOffMain(_ id: String, keepState: Bool, validated: ValidatedPlugin? = nil) async throws(LoaderError) -> PluginGeneration {
        try refuseWhilePreparing(id)
        guard let (record, before) = try replaced(id) else { return try loadAfresh(id) }
        reloadsPreparing.insert(id)
        defer { reloadsPreparing.remove(id) }
        let started = ContinuousClock.now
        let (folder, signatures, directory) = (record.source.folder, configuration.signatures, generations.runtimeDirectory)
        let number = registry.peekNextGenerationNumber(of: id)
        let validation = await Self.onThreadOfItsOwn { () -> Result<ValidatedPlugin, PluginValidationFailure> in
            let validation = validated.map { .success($0) } ?? PluginValidator.validate(path: folder, signatures: signatures)
            if case .success(let plugin) = validation, plugin.manifest.id == id { directory.prepareShadowCopy(of: plugin, generation: number) }
            return validation
        }
        // The plugin may have been reloaded, unloaded or made busy meanwhile: asked again. A
        // generation other than the one this validation was made for is not replaced by it
        // (its shadow copy was made for the number that generation then took).
        guard let (current, old) = try replaced(id) else { return try loadAfresh(id) }
        guard old === before, registry.peekNextGenerationNumber(of: id) == number else {
            throw LoaderError(.lifecycle, plugin: id, "changed while its reload was prepared (generation \(old.number) now); reload it again")
        }
        return try replace(current, old, with: validation, keepState: keepState, started: started)
    }

    /// One reload at a time: another one's shadow copy of the same next generation is being
    /// written off the main actor.
    private func refuseWhilePreparing(_ id: String) throws(LoaderError) {
        guard reloadsPreparing.contains(id) else { return }
        throw LoaderError(.lifecycle, plugin: id, "is being reloaded already; reload it once that reload ends")
    }

    /// The record and generation a reload of `id` replaces. Nil when it is loaded afresh
    /// instead (its worker crashed or failed); refused when it is not loaded or busy.
    private func replaced(_ id: String) throws(LoaderError) -> (PluginRecord, PluginGeneration)? {
        guard let record = registry[id], let old = record.generation else {
            if let record = registry[id], record.state != .discovered { return nil }
            throw LoaderError(.notLoaded, plugin: id, registry[id] == nil ? "no plugin has this id" : "not loaded")
        }
        try Self.refuseWhileBusy(old, "reload")
        return (record, old)
    }

    /// A plugin whose worker crashed (or failed) is loaded afresh.
    private func loadAfresh(_ id: String) throws(LoaderError) -> PluginGeneration {
        registry[id]?.clearCrashes()
        return try load(id)
    }

    /// Replaces `old` with a generation of the validated folder: a `ReloadTransaction` takes
    /// its screens out, loads the new generation and reopens them (or rolls back).
    private func replace(_ record: PluginRecord, _ old: PluginGeneration, with validation: Result<ValidatedPlugin, PluginValidationFailure>,
                         keepState: Bool, started: ContinuousClock.Instant) throws(LoaderError) -> PluginGeneration {
        let id = old.pluginID
        let previousSource = record.source
        switch validation {
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
        return try navigator.topLevel { () throws(LoaderError) -> PluginGeneration in
            var transaction = ReloadTransaction(navigator: navigator, events: events, record: record, old: old,
                                                previousSource: previousSource, keepState: keepState)
            let fresh = try transaction.commit({ () throws(LoaderError) in try generations.make(record) }, end: generations.end)
            let elapsed = started.elapsed
            var timings = transaction.timings
            timings.validate = validated
            timings.canary = generations.lastCanaryDuration
            timings.total = elapsed
            lastReloadDuration = elapsed
            lastReloadTimings = timings
            events.emit(.reloaded, .plugin(id), .reloaded(from: old.number, to: fresh.number, screens: transaction.places.count),
                        reloadTimings: timings)
            generations.end(old)
            return fresh
        }
    }

    /// Runs `work` on a new thread and returns its result; the caller is suspended, not
    /// blocked (file reads and hashing must not hold a thread of Swift concurrency's pool).
    private static func onThreadOfItsOwn<T: Sendable>(_ work: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            Thread.detachNewThread { continuation.resume(returning: work()) }
        }
    }
}
