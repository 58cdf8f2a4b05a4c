@_spi(Engine) import BerthCore

/// Loading with each new generation made off the main actor (`GenerationMaker.makeOffMain`):
/// the main actor goes on while a plugin's entry runs, and only records the generation.
extension PluginLoader {
    /// `load`, each generation (`id`'s requirements first) made off the main actor; the
    /// registry records it on the main actor once it is ready.
    @discardableResult
    func loadOffMain(_ id: String) async throws(LoaderError) -> PluginGeneration {
        var failed: [String: LoaderError] = [:]
        return try await loadOffMain(id, failed: &failed)
    }

    /// `loadFolder`, the folder validated on a thread of its own (unless `validated` is it,
    /// as a watcher validated it) and the generation made off the main actor.
    @discardableResult
    func loadFolderOffMain(_ path: String, validated: ValidatedPlugin? = nil) async throws(LoaderError) -> PluginGeneration {
        let plugin: ValidatedPlugin
        if let validated {
            plugin = validated
        } else {
            let signatures = configuration.signatures
            plugin = try await OwnThread.run { Self.validatedFolder(path, signatures: signatures) }.get()
        }
        if let loaded = try admit(plugin) { return loaded }
        return try await loadOffMain(plugin.manifest.id)
    }

    /// `load(_:failed:)`, off the main actor: each plugin tried once, a requirement's failure
    /// naming `id`.
    private func loadOffMain(_ id: String, failed: inout [String: LoaderError]) async throws(LoaderError) -> PluginGeneration {
        if let earlier = failed[id] { throw earlier }
        if let generation = registry[id]?.generation { return generation }
        guard let record = registry[id] else { throw LoaderError(.notFound, plugin: id, "no such plugin") }
        do throws(LoaderError) {
            do throws(LoaderError) {
                _ = try registry.loadOrder(for: id)  // a missing, out-of-range or cyclic requirement, named
                for requirement in record.source.manifest.requires {
                    do { _ = try await loadOffMain(requirement.id, failed: &failed) } catch {
                        throw Self.dependencyFailed(id, requires: requirement.id, error)
                    }
                }
            } catch {
                throw requirementsFailed(id, error)
            }
            return try await makeGenerationOffMain(of: id)
        } catch {
            failed[id] = error
            throw error
        }
    }

    /// Makes `id`'s generation off the main actor and records it. One loaded meanwhile
    /// (a screen of a lazy plugin opened) is kept, and the one made here ends.
    private func makeGenerationOffMain(of id: String) async throws(LoaderError) -> PluginGeneration {
        guard let record = registry[id] else { throw LoaderError(.notFound, plugin: id, "no such plugin") }
        try refuseWhilePreparing(id, "load")
        reloadsPreparing.insert(id)
        defer { reloadsPreparing.remove(id) }
        let fresh: PluginGeneration
        do {
            if case .failed = record.state { record.clearCrashes() }
            if configuration.isolation.mode(for: record.source.manifest) == .process { moveGroupWorker(toAdmit: record.source) }
            fresh = try await generations.makeOffMain(record.source)
        } catch {
            events.emit(.failed, .plugin(id), error.message)
            throw error
        }
        guard registry[id] === record else {
            generations.end(fresh)
            throw LoaderError(.lifecycle, plugin: id, "was removed while its generation \(fresh.number) was made")
        }
        if let loaded = record.generation {
            generations.end(fresh)
            return loaded
        }
        generations.putInUse(fresh)
        record.loaded(fresh)
        return fresh
    }
}
