@_spi(Engine) import BerthCore
extension PluginLoader {
    /// Before `plugin`'s first load: when its group's running worker does not admit it (it
    /// was discovered after that worker confined itself, and Landlock only narrows), the group
    /// moves to a new worker. The running one takes no new member, and each loaded member is
    /// reloaded, state kept, providers first, into a new group worker whose sandbox covers
    /// every discovered member (`groupSandboxPolicy`); their screens reopen in place, and the
    /// old worker ends with its last member. A member whose reload fails stays in the old
    /// worker and is reported.
    func moveGroupWorker(toAdmit plugin: ValidatedPlugin) {
        let id = plugin.manifest.id
        guard let name = plugin.manifest.isolationGroup, let running = generations.workerGroups.open(name),
              !running.admits(runtimeDirectory.folder(of: id)) else { return }
        // A plugin the group will not take runs alone: the group's worker stays as it is.
        let consent = GroupConsent(configured: configuration.groups)
        guard consent.decide(plugin, group: name, members: generations.runningMembers(of: name),
                             others: generations.otherPlugins(naming: name, besides: plugin)) == .joins else { return }
        running.closeToNewMembers()
        let members = registry.unloadOrder().reversed().filter { member in
            member != id && registry[member]?.generation.map { $0.isolation == .process && $0.workerPID == running.worker.pid } == true
        }
        for member in members {
            events.emit(.reloaded, .plugin(member), "group '\(name)' moves to a new worker whose sandbox covers \(id) (discovered after the group's worker started)")
            do {
                try reload(member, keepState: true)
            } catch {
                events.emit(.failed, .plugin(member), "stays in group '\(name)''s previous worker: \(error.message)")
            }
        }
    }
}
