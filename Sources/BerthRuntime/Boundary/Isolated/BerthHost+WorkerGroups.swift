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

extension BerthHost {
    /// Before `plugin`'s first load: when its group's running worker does not admit it (it
    /// was discovered after that worker confined itself, and Landlock only narrows), the group
    /// moves to a new worker. The running one takes no new member, and each loaded member is
    /// reloaded, state kept, providers first, into a new group worker whose sandbox covers
    /// every discovered member (`groupSandboxPolicy`); their screens reopen in place, and the
    /// old worker ends with its last member. A member whose reload fails stays in the old
    /// worker and is reported.
    func moveGroupWorker(toAdmit plugin: ValidatedPlugin) {
        let id = plugin.manifest.id
        guard let name = plugin.manifest.isolationGroup, let running = workerGroups.open(name),
              !running.admits(runtimeDirectory.folder(of: id)) else { return }
        running.closeToNewMembers()
        let members = registry.unloadOrder().reversed().filter { member in
            member != id && plugins[member]?.generation?.source.manifest.isolationGroup == name
        }
        for member in members {
            emit(.reloaded, .plugin(member), "group '\(name)' moves to a new worker whose sandbox covers \(id) (discovered after the group's worker started)")
            do {
                try reload(member, keepState: true)
            } catch {
                emit(.failed, .plugin(member), "stays in group '\(name)''s previous worker: \(error.message)")
            }
        }
    }
}
