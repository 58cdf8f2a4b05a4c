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
    /// hashing the library) on a thread of their own, and the new generation made off the
    /// main actor before any screen is touched (`GenerationMaker.makeOffMain`: the trial
    /// load, the image's open and handshake on its own lane, or the worker's start and
    /// `hello`): the main actor goes on meanwhile, and then only swaps the generations. A
    /// generation that fails to make leaves the old one and its screens as they were.
    /// `validated`: the folder as a watcher already validated it off the main actor.
    @discardableResult
    func reloadOffMain(_ id: String, keepState: Bool, validated: ValidatedPlugin? = nil) async throws(LoaderError) -> PluginGeneration {
        try refuseWhilePreparing(id)
        // A task's post running on the lane returns first: the busy check below does not wait.
        if let running = registry[id]?.generation { await running.connection.hostCallsEnded() }
        guard let (record, before) = try replaced(id) else { return try await loadAfreshOffMain(id) }
        reloadsPreparing.insert(id)
        defer { reloadsPreparing.remove(id) }
        let started = ContinuousClock.now
        let (folder, signatures, directory) = (record.source.folder, configuration.signatures, generations.runtimeDirectory)
        let number = registry.peekNextGenerationNumber(of: id)
        let validation = await OwnThread.run { () -> Result<ValidatedPlugin, PluginValidationFailure> in
            let validation = validated.map { .success($0) } ?? PluginValidator.validate(path: folder, signatures: signatures)
            if case .success(let plugin) = validation, plugin.manifest.id == id { directory.prepareShadowCopy(of: plugin, generation: number) }
            return validation
        }
        // A task's post running on the lane returns first (a person's call there refuses the
        // reload below).
        await before.connection.hostCallsEnded()
        // The plugin may have been reloaded, unloaded or made busy meanwhile: asked again. A
        // generation other than the one this validation was made for is not replaced by it
        // (its shadow copy was made for the number that generation then took).
        guard let (_, old) = try replaced(id) else { return try loadAfresh(id) }
        try refuseIfChanged(id, old: old, before: before, since: "its reload was prepared")
        guard registry.peekNextGenerationNumber(of: id) == number else {
            throw LoaderError(.lifecycle, plugin: id, "changed while its reload was prepared (generation \(old.number) now); reload it again")
        }
        let plugin = try replacement(for: old, from: validation)
        let validatedIn = started.elapsed
        generations.canaryDurations[id] = nil  // set by the trial load of the new generation, if it makes one
        let fresh: PluginGeneration
        do {
            fresh = try await generations.makeOffMain(plugin)
        } catch {
            // Nothing was taken out: the old generation and its screens run on.
            var failure = error
            failure.rollback = LoaderError.Rollback(step: .load, generation: old.number)
            events.emit(.failed, .plugin(id), failure.message)
            throw failure
        }
        // A task's post running on the old generation's lane returns first (a person's call
        // there refuses the reload below).
        await old.connection.hostCallsEnded()
        do throws(LoaderError) {
            // Unloaded, reloaded, crashed or made busy meanwhile: the new generation is not used.
            try refuseIfChanged(id, old: try replaced(id)?.1, before: old, since: "its generation \(fresh.number) was made")
        } catch {
            generations.end(fresh)
            throw error
        }
        generations.putInUse(fresh)
        return try swapGenerations(record, old, to: plugin, keepState: keepState, started: started, validated: validatedIn) { fresh }
    }

    /// Refused when `id`'s generation is no longer `before` (reloaded or unloaded since).
    private func refuseIfChanged(_ id: String, old: PluginGeneration?, before: PluginGeneration, since: String) throws(LoaderError) {
        guard old !== before else { return }
        let now = old.map { "generation \($0.number) now" } ?? "not loaded now"
        throw LoaderError(.lifecycle, plugin: id, "changed while \(since) (\(now)); reload it again")
    }

    /// A crashed plugin's `reloadOffMain`: loaded afresh, its generation made off the main actor.
    private func loadAfreshOffMain(_ id: String) async throws(LoaderError) -> PluginGeneration {
        registry[id]?.clearCrashes()
        return try await loadOffMain(id)
    }

    /// One reload or load at a time: another one's next generation (its shadow copy, its
    /// image or worker) is being made off the main actor.
    func refuseWhilePreparing(_ id: String, _ verb: String = "reload") throws(LoaderError) {
        guard reloadsPreparing.contains(id) else { return }
        throw LoaderError(.lifecycle, plugin: id, "is being loaded or reloaded already; \(verb) it once that ends")
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
        let plugin = try replacement(for: old, from: validation)
        let validated = started.elapsed
        generations.canaryDurations[old.pluginID] = nil  // set by the trial load of the new generation, if it makes one
        return try swapGenerations(record, old, to: plugin, keepState: keepState, started: started, validated: validated) { [generations] () throws(LoaderError) in
            try generations.make(record)
        }
    }

    /// The plugin a reload of `old` loads: the validated folder, with the same id and its
    /// requirements met; else an error saying `old` stays loaded.
    private func replacement(for old: PluginGeneration, from validation: Result<ValidatedPlugin, PluginValidationFailure>) throws(LoaderError) -> ValidatedPlugin {
        let id = old.pluginID
        switch validation {
        case .success(let plugin):
            guard plugin.manifest.id == id else {
                throw LoaderError(.invalid, plugin: id, "reload failed at validate: the manifest now says id '\(plugin.manifest.id)'; generation \(old.number) stays loaded")
            }
            try registry.checkDependencies(of: plugin.manifest, generation: old.number)
            return plugin
        case .failure(let failure):
            throw LoaderError(.invalid, plugin: id, "reload failed at validate: \(failure.firstError?.description ?? "invalid"); generation \(old.number) stays loaded")
        }
    }

    /// The reload transaction: `old`'s screens out, the generation `make` gives (of `plugin`,
    /// now the record's source), the screens back in, or the rollback.
    private func swapGenerations(_ record: PluginRecord, _ old: PluginGeneration, to plugin: ValidatedPlugin, keepState: Bool,
                                 started: ContinuousClock.Instant, validated: Duration,
                                 make: () throws(LoaderError) -> PluginGeneration) throws(LoaderError) -> PluginGeneration {
        let id = old.pluginID
        let previousSource = record.source
        record.source = plugin
        return try navigator.topLevel { () throws(LoaderError) -> PluginGeneration in
            var transaction = ReloadTransaction(navigator: navigator, events: events, record: record, old: old,
                                                previousSource: previousSource, keepState: keepState)
            let fresh = try transaction.commit(make, end: generations.end)
            let elapsed = started.elapsed
            var timings = transaction.timings
            timings.validate = validated
            timings.canary = generations.canaryDurations[id] ?? .zero
            timings.total = elapsed
            lastReloadDuration = elapsed
            lastReloadTimings = timings
            events.emit(.reloaded, .plugin(id), .reloaded(from: old.number, to: fresh.number, screens: transaction.places.count),
                        reloadTimings: timings)
            generations.end(old)
            return fresh
        }
    }
}
