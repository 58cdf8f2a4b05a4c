@_spi(Engine) import BerthCore
import Foundation

extension GenerationMaker {
    /// Refuses to run `plugin` in the host's process when its folder lies where a worker can
    /// write (Docs/security.md): this host's runtime folder (the data folders of plugins
    /// that do not persist), the state folder's `plugin-data`, or a `files.write` grant of
    /// any plugin this host knows. Otherwise a sandboxed plugin could write a library there
    /// and have it loaded, unconfined, into the host.
    func refuseInProcessLoadFromWorkerWritableFolder(_ plugin: ValidatedPlugin) throws(LoaderError) {
        let folder = Self.resolved(plugin.folder)
        guard let writable = workerWritableFolders().first(where: { Self.isSameOrBeneath(folder, Self.resolved($0)) }) else { return }
        throw LoaderError(.invalid, plugin: plugin.manifest.id, path: plugin.folder,
                          detail: "refused in-process: its folder is inside \(writable), which a sandboxed worker can write; run it isolated or move it")
    }

    /// The folders a worker of this host may write.
    private func workerWritableFolders() -> [String] {
        var folders = [runtimeDirectory.path]
        if let state = configuration.stateDirectory {
            folders.append((state as NSString).appendingPathComponent("plugin-data"))
        }
        // Every load asks: the environment is read only when a grant needs it, and through
        // getenv (ProcessInfo.environment copies the whole of it into a dictionary).
        var home: String?
        for record in registry.records.values where record.source.manifest.grantedCapabilities.contains(.filesWrite) {
            let base = home ?? getenv("HOME").map { String(cString: $0) } ?? NSHomeDirectory()
            home = base
            folders += record.source.manifest.files.write.map { FileGrants.resolve($0, home: base) }
        }
        return folders
    }

    /// `path` with symbolic links resolved as far as it exists: by the kernel when all of it
    /// exists (a fraction of Foundation's walk, which every load paid), else by Foundation.
    private static func resolved(_ path: String) -> String {
        RawFile.resolved(path)?.path ?? URL(fileURLWithPath: path).standardizedFileURL.resolvingSymlinksInPath().path
    }

    private static func isSameOrBeneath(_ path: String, _ folder: String) -> Bool {
        path == folder || folder == "/" || path.hasPrefix(folder.hasSuffix("/") ? folder : folder + "/")
    }
}
