@_spi(Engine) import BerthCore
import Foundation

/// What a watcher does to the host's plugins: load a folder that appeared, reload a
/// changed one, unload and forget a removed one (`BerthHost`).
@MainActor
protocol PluginFolderLoader: AnyObject {
    var plugins: [String: PluginRecord] { get }
    /// A reload of the folder as the watcher validated it, its copy made off the main actor.
    @discardableResult
    func reloadOffMain(_ id: String, keepState: Bool, validated: ValidatedPlugin?) async throws(LoaderError) -> PluginGeneration
    /// A load of the folder as the watcher validated it, its generation made off the main actor.
    @discardableResult
    func loadFolderOffMain(_ path: String, validated: ValidatedPlugin?) async throws(LoaderError) -> PluginGeneration
    /// An unload that awaits a task's post on the plugin's lane rather than blocking for it.
    func unloadOffMain(_ id: String) async throws(LoaderError)
    func forget(_ id: String)
}

/// Watching the plugins folders with inotify. A change is acted on
/// only once its files are complete — quiet for the debounce, sizes stable, and the whole
/// validation passing (ELF header and section table whole, symbols present, sha256 when
/// the manifest has one) — so a half-written library is never opened. A new folder loads,
/// a changed library or manifest reloads, a removed folder unloads.
@MainActor
final class PluginWatcher {
    /// What the watcher does to the host's plugins when their folders change.
    private unowned let loader: any PluginFolderLoader
    private let events: EventLog
    private let signatures: SignaturePolicy
    private let watcher: DirectoryWatcher
    private let debounce: Duration
    private let keepState: Bool
    /// The settle task waiting on each changed folder.
    private var pending: [String: Task<Void, Never>] = [:]
    /// The one task that brings the watcher thread's changes to the main actor, in order;
    /// `stop` ends its stream and cancels it.
    private var delivery: Task<Void, Never>?
    private var endDelivery: (@Sendable () -> Void)?
    /// The writers each folder is waiting on (reported once per change).
    private var waitingFor: [String: [Int32]] = [:]
    /// Set by `stop`: a settle already past an `await` must not touch `loader` (unowned),
    /// which may be gone by then.
    private var stopped = false
    private var plugins: [String: PluginRecord] { loader.plugins }

    private init(loader: any PluginFolderLoader, events: EventLog, signatures: SignaturePolicy, watcher: DirectoryWatcher,
                 debounce: Duration, keepState: Bool) {
        self.loader = loader
        self.events = events
        self.signatures = signatures
        self.watcher = watcher
        self.debounce = debounce
        self.keepState = keepState
    }

    /// Starts watching every folder of `pluginFolders` and each plugin folder in them.
    static func start(pluginFolders: [String], signatures: SignaturePolicy, loader: any PluginFolderLoader, events: EventLog,
                      debounce: Duration, keepState: Bool) throws(WatchError) -> PluginWatcher {
        let watcher = try DirectoryWatcher()
        for folder in pluginFolders {
            try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            try watcher.watch(folder)
            for plugin in PluginDiscovery.subfolders(of: folder) { try? watcher.watch(plugin) }
        }
        let plugin = PluginWatcher(loader: loader, events: events, signatures: signatures, watcher: watcher, debounce: debounce, keepState: keepState)
        let roots = Set(pluginFolders.map(PluginValidator.realPath))
        // The folders changed since the main actor last took them, in order, each once. One
        // write is several inotify events (create, modify, close, rename): they reach the
        // main actor as one wake-up, not one turn each, which on a busy main actor means
        // one wait in its queue instead of several.
        let changedFolders = Locked<[String]>([])
        let (wakes, wake) = AsyncStream<Void>.makeStream(bufferingPolicy: .bufferingNewest(1))
        plugin.endDelivery = { wake.finish() }
        plugin.delivery = Task { @MainActor [weak plugin] in
            for await _ in wakes {
                let folders = changedFolders.withLock { folders in
                    defer { folders = [] }
                    return folders
                }
                for folder in folders { plugin?.pluginFolderChanged(folder) }
            }
        }
        watcher.start { folder, name in
            // A change inside a plugin folder concerns that folder; a change in a plugins
            // folder concerns the entry named.
            let isRoot = roots.contains(PluginValidator.realPath(folder))
            let pluginFolder = isRoot ? (folder as NSString).appendingPathComponent(name) : folder
            guard !name.isEmpty || !isRoot else { return }
            changedFolders.withLock { if !$0.contains(pluginFolder) { $0.append(pluginFolder) } }
            wake.yield()
        }
        events.emit(.event, .watcher, "watching \(pluginFolders.joined(separator: ", ")) (debounce \(debounce))")
        return plugin
    }

    func stop() {
        stopped = true
        watcher.stop()
        for task in pending.values { task.cancel() }
        pending = [:]
        endDelivery?()
        delivery?.cancel()
        delivery = nil
    }

    /// Waits (debounced) for `folder` to settle, then acts on it.
    func pluginFolderChanged(_ folder: String) {
        guard !stopped else { return }
        if FileManager.default.fileExists(atPath: folder), !watcher.watchedPaths.contains(folder) {
            try? watcher.watch(folder)
        }
        pending[folder]?.cancel()
        pending[folder] = Task { @MainActor [weak self, debounce] in
            try? await Task.sleep(for: debounce)
            guard !Task.isCancelled, let self, !self.stopped else { return }
            await self.settle(folder)
        }
    }

    private func settle(_ folder: String) async {
        pending[folder] = nil
        let owner = plugins.values.first { $0.source.folder == folder || PluginValidator.realPath($0.source.folder) == PluginValidator.realPath(folder) }
        guard FileManager.default.fileExists(atPath: folder) else {
            guard let owner else { return }
            let id = owner.source.manifest.id
            events.emit(.event, .watcher, "\(folder) was removed: unloading \(id)")
            if owner.generation != nil {
                do { try await loader.unloadOffMain(id) } catch { events.emit(.failed, .plugin(id), "watch: \(error.message)") ; return }
            }
            loader.forget(id)
            return
        }
        // The folder is inspected off the main actor, so the host answers meanwhile (the
        // writer scan reads every process's descriptors, validation reads and hashes the
        // library), on a thread of its own rather than the cooperative pool, whose few threads
        // (one per core) other blocking work may hold for as long as it likes; the main actor
        // is asked back once, with the outcome.
        let plugin: ValidatedPlugin
        let signatures = signatures
        let settleWait = debounce / 2
        let inspection = await withCheckedContinuation { continuation in
            let thread = Thread { continuation.resume(returning: Self.inspect(folder, after: settleWait, signatures: signatures)) }
            thread.name = "berth.watch-validate"
            thread.start()
        }
        guard !stopped else { return }
        let validation: Result<ValidatedPlugin, PluginValidationFailure>
        switch inspection {
        case .changing:
            pluginFolderChanged(folder)
            return
        case .writers(let writers):
            if waitingFor[folder] != writers {
                events.emit(.event, .watcher, "\(folder): waiting for process \(writers.map(String.init).joined(separator: ", ")) to finish writing")
            }
            waitingFor[folder] = writers
            pluginFolderChanged(folder)
            return
        case .noManifest:
            // A folder being filled: its manifest's arrival is a change of its own.
            waitingFor[folder] = nil
            return
        case .validated(let result):
            waitingFor[folder] = nil
            validation = result
        }
        switch validation {
        case .success(let valid): plugin = valid
        case .failure(let failure):
            let kept = owner?.generation.map { "; generation \($0.number) stays" } ?? ""
            events.emit(.failed, .watcher, "\(folder): not loaded: \(failure.firstError?.description ?? "invalid")\(kept)")
            return
        }
        let id = plugin.manifest.id
        // A folder holds one plugin: a new id there replaces the one that came from it, once
        // it has loaded. New content that fails to load is invalid content like any other:
        // the running generation and its screens stay.
        if let owner, owner.source.manifest.id != id {
            let previous = owner.source.manifest.id
            if plugins[id]?.generation == nil {
                let known = plugins[id] != nil
                do { try await loader.loadFolderOffMain(folder, validated: plugin) } catch {
                    if !known { loader.forget(id) }
                    let kept = owner.generation.map { "; \(previous) generation \($0.number) stays" } ?? ""
                    events.emit(.failed, .watcher, "\(folder) now holds \(id), which did not load: \(error.message)\(kept)")
                    return
                }
            }
            events.emit(.event, .watcher, "\(folder) now holds \(id): unloading \(previous)")
            if owner.generation != nil {
                do { try await loader.unloadOffMain(previous) } catch { events.emit(.failed, .plugin(previous), "watch: \(error.message)"); return }
            }
            loader.forget(previous)
            return
        }
        if let record = plugins[id], let generation = record.generation {
            let changed = plugin.librarySHA256 != generation.source.librarySHA256 || plugin.manifestSHA256 != generation.source.manifestSHA256
            guard changed else { return }
            events.emit(.event, .watcher, "\(id) changed on disk: reloading")
            do { try await loader.reloadOffMain(id, keepState: keepState, validated: plugin) } catch { events.emit(.failed, .plugin(id), "watch: \(error.message)") }
        } else {
            events.emit(.event, .watcher, "\(folder) appeared: loading \(id)")
            do { try await loader.loadFolderOffMain(folder, validated: plugin) } catch { events.emit(.failed, .plugin(id), "watch: \(error.message)") }
        }
    }

    /// What a look at a settled folder found.
    private enum Inspection: Sendable {
        /// A file's size changed during the wait: a build may have paused mid-write.
        case changing
        /// These processes may still write one of its files.
        case writers([Int32])
        /// It had no manifest when it was validated: not yet a plugin, so not an error
        /// (judged by what validation saw, not by a later look on the main actor, when a
        /// manifest written meanwhile would make the stale failure look like the answer).
        case noManifest
        /// Its files held still and nobody writes them: the validation's outcome.
        case validated(Result<ValidatedPlugin, PluginValidationFailure>)
    }

    /// Complete means sizes and modification times that hold still across `wait`, before
    /// and after validation, and no other process that may
    /// still write a file (a writer can keep the size steady while it fills the middle);
    /// only then is the folder validated. Blocks the calling thread.
    nonisolated private static func inspect(_ folder: String, after wait: Duration, signatures: SignaturePolicy) -> Inspection {
        let before = fileStamps(in: folder)
        let (seconds, attoseconds) = wait.components
        Thread.sleep(forTimeInterval: Double(seconds) + Double(attoseconds) / 1e18)
        guard fileStamps(in: folder) == before else { return .changing }
        let validation = PluginValidator.validate(path: folder, signatures: signatures)
        // Stamps and writers are checked after validation read the folder, so a file created,
        // opened for writing or written before or during it is caught (a writer that makes
        // the library with its final size and both ends first would otherwise validate).
        // Validation only reads: a half-written file's result is thrown away.
        guard fileStamps(in: folder) == before else { return .changing }
        let writers = before.keys.sorted().map { (folder as NSString).appendingPathComponent($0) }.flatMap(OpenWriters.of)
        guard writers.isEmpty else { return .writers(writers) }
        guard before[PluginValidator.manifestFileName] != nil else { return .noManifest }
        return .validated(validation)
    }

    /// Each file's size and modification time: a write that keeps the size (the middle of
    /// a file made at its final size first) still changes the stamp.
    nonisolated private static func fileStamps(in folder: String) -> [String: FileStamp] {
        var stamps: [String: FileStamp] = [:]
        for name in (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? [] {
            let attributes = try? FileManager.default.attributesOfItem(atPath: (folder as NSString).appendingPathComponent(name))
            stamps[name] = FileStamp(size: attributes?[.size] as? Int ?? -1, modified: attributes?[.modificationDate] as? Date)
        }
        return stamps
    }

    private struct FileStamp: Equatable {
        var size: Int
        var modified: Date?
    }
}
