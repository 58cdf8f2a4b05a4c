import Foundation

/// `berth run --watch`: the plugins folders are watched with inotify. A change is acted on
/// only once its files are complete — quiet for the debounce, sizes stable, and the whole
/// validation passing (ELF header and section table whole, symbols present, sha256 when
/// the manifest has one) — so a half-written library is never opened. A new folder loads,
/// a changed library or manifest reloads, a removed folder unloads.
extension BerthHost {
    /// Starts watching every plugins folder and each plugin folder in them.
    public func startWatching(debounce: Duration = .milliseconds(200), keepState: Bool = false) throws(WatchError) {
        let watcher = try DirectoryWatcher()
        for folder in configuration.pluginFolders {
            try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            try watcher.watch(folder)
            for plugin in PluginDiscovery.subfolders(of: folder) { try? watcher.watch(plugin) }
        }
        watchState = WatchState(watcher: watcher, debounce: debounce, keepState: keepState)
        let roots = Set(configuration.pluginFolders.map(PluginValidator.realPath))
        watcher.start { folder, name in
            // A change inside a plugin folder concerns that folder; a change in a plugins
            // folder concerns the entry named.
            let isRoot = roots.contains(PluginValidator.realPath(folder))
            let pluginFolder = isRoot ? (folder as NSString).appendingPathComponent(name) : folder
            guard !name.isEmpty || !isRoot else { return }
            Task { @MainActor [weak self] in self?.pluginFolderChanged(pluginFolder) }
        }
        emit(.event, "watch", "watching \(configuration.pluginFolders.joined(separator: ", ")) (debounce \(debounce))")
    }

    public func stopWatching() {
        watchState?.watcher.stop()
        for task in watchState?.pending.values ?? [:].values { task.cancel() }
        watchState = nil
    }

    /// Waits (debounced) for `folder` to settle, then acts on it.
    func pluginFolderChanged(_ folder: String) {
        guard let state = watchState else { return }
        if FileManager.default.fileExists(atPath: folder), !state.watcher.watchedPaths.contains(folder) {
            try? state.watcher.watch(folder)
        }
        state.pending[folder]?.cancel()
        state.pending[folder] = Task { @MainActor [weak self] in
            try? await Task.sleep(for: state.debounce)
            guard !Task.isCancelled, let self else { return }
            await self.settle(folder)
        }
    }

    private func settle(_ folder: String) async {
        guard let state = watchState else { return }
        state.pending[folder] = nil
        let owner = plugins.values.first { $0.source.folder == folder || PluginValidator.realPath($0.source.folder) == PluginValidator.realPath(folder) }
        guard FileManager.default.fileExists(atPath: folder) else {
            guard let owner else { return }
            let id = owner.source.manifest.id
            emit(.event, "watch", "\(folder) was removed: unloading \(id)")
            if owner.generation != nil {
                do { try unload(id) } catch { emit(.failed, id, "watch: \(error.message)") ; return }
            }
            forget(id)
            return
        }
        // Sizes must hold still across a further short wait: a build may pause mid-write.
        let before = Self.fileSizes(in: folder)
        try? await Task.sleep(for: state.debounce / 2)
        guard Self.fileSizes(in: folder) == before else {
            pluginFolderChanged(folder)
            return
        }
        let plugin: ValidatedPlugin
        switch PluginValidator.validate(path: folder) {
        case .success(let valid): plugin = valid
        case .failure(let failure):
            guard FileManager.default.fileExists(atPath: (folder as NSString).appendingPathComponent(PluginValidator.manifestFileName)) else { return }
            let kept = owner?.generation.map { "; generation \($0.number) stays" } ?? ""
            emit(.failed, "watch", "\(folder): not loaded: \(failure.problems.first?.description ?? "invalid")\(kept)")
            return
        }
        let id = plugin.manifest.id
        if let record = plugins[id], let generation = record.generation {
            let changed = plugin.librarySHA256 != generation.source.librarySHA256 || plugin.manifestSHA256 != generation.source.manifestSHA256
            guard changed else { return }
            emit(.event, "watch", "\(id) changed on disk: reloading")
            do { try reload(id, keepState: state.keepState) } catch { emit(.failed, id, "watch: \(error.message)") }
        } else {
            emit(.event, "watch", "\(folder) appeared: loading \(id)")
            do { try loadFolder(folder) } catch { emit(.failed, id, "watch: \(error.message)") }
        }
    }

    private static func fileSizes(in folder: String) -> [String: Int] {
        var sizes: [String: Int] = [:]
        for name in (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? [] {
            let path = (folder as NSString).appendingPathComponent(name)
            sizes[name] = (try? FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? -1
        }
        return sizes
    }
}

/// What `--watch` needs between events.
@MainActor
final class WatchState {
    let watcher: DirectoryWatcher
    let debounce: Duration
    let keepState: Bool
    var pending: [String: Task<Void, Never>] = [:]

    init(watcher: DirectoryWatcher, debounce: Duration, keepState: Bool) {
        self.watcher = watcher
        self.debounce = debounce
        self.keepState = keepState
    }
}
