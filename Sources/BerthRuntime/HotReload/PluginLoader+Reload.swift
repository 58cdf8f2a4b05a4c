/// Reloading a plugin: validate its folder again, then a `ReloadTransaction` takes its
/// screens out, loads the new generation and reopens them (or rolls back).
extension PluginLoader {
    /// The plugins the registry knows, by id (what a watcher matches folders against).
    var plugins: [String: PluginRecord] { registry.records }

    /// Reloads `id` from its folder (see `BerthHost.reload`).
    @discardableResult
    func reload(_ id: String, keepState: Bool) throws(LoaderError) -> PluginGeneration {
        guard let record = registry[id], let old = record.generation else {
            // A plugin whose worker crashed (or failed) is loaded afresh.
            if let record = registry[id], record.state != .discovered {
                record.clearCrashes()
                return try load(id)
            }
            throw LoaderError(.notLoaded, plugin: id, registry[id] == nil ? "no plugin has this id" : "not loaded")
        }
        try Self.refuseWhileBusy(old, "reload")
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
}
