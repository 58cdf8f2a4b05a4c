import Foundation

extension GenerationMaker {
    /// The sandbox a plugin's worker enters: its own policy, or for a member of a manifest
    /// group the union of every discovered member's (a worker confines itself once, at its
    /// first hello, and members join it later: Landlock can only narrow). Its data folder
    /// (`BERTH_PLUGIN_DATA`) is the first member's; every member's own is writable.
    func groupSandboxPolicy(for plugin: ValidatedPlugin) throws(LoaderError) -> SandboxPolicy {
        var policy = try sandboxPolicy(for: plugin)
        guard let group = plugin.manifest.isolationGroup else { return policy }
        let others = registry.records.values.map(\.source).filter { $0.manifest.isolationGroup == group && $0.manifest.id != plugin.manifest.id }
        for other in others.sorted(by: { $0.manifest.id < $1.manifest.id }) {
            // Landlock opens each path when the worker confines itself: the folder of their
            // shadow copies must exist by then.
            try? FileManager.default.createDirectory(atPath: runtimeDirectory.folder(of: other.manifest.id), withIntermediateDirectories: true,
                                                     attributes: [.posixPermissions: 0o700])
            policy.join(try sandboxPolicy(for: other))
        }
        return policy
    }
}
