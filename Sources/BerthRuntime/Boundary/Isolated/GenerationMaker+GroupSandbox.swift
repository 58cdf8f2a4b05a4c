@_spi(Engine) import BerthCore
import Foundation

extension GenerationMaker {
    /// The sandbox a plugin's worker enters: its own policy, or for a member of a manifest
    /// group the union of every discovered member's (a worker confines itself once, at its
    /// first hello, and members join it later: Landlock can only narrow). Its data folder
    /// (`BERTH_PLUGIN_DATA`) is the first member's; every member's own is writable.
    /// With the system-call filter of the final policy (`withSystemCallFilter`).
    func groupSandboxPolicy(for plugin: ValidatedPlugin) throws(LoaderError) -> SandboxPolicy {
        var policy = try sandboxPolicy(for: plugin)
        guard let group = plugin.manifest.isolationGroup else { return try policy.withSystemCallFilter(plugin: plugin.manifest.id) }
        let consent = GroupConsent(configured: configuration.groups)
        // Only members that would be let in with it: a plugin refused the group never
        // widens the group's sandbox.
        let others = registry.records.values.map(\.source).filter {
            $0.manifest.isolationGroup == group && $0.manifest.id != plugin.manifest.id && consent.mayShare(plugin, with: $0, group: group)
        }
        for other in others.sorted(by: { $0.manifest.id < $1.manifest.id }) {
            // Landlock opens each path when the worker confines itself: the folder of their
            // shadow copies must exist by then.
            try? FileManager.default.createDirectory(atPath: runtimeDirectory.folder(of: other.manifest.id), withIntermediateDirectories: true,
                                                     attributes: [.posixPermissions: 0o700])
            policy.join(try sandboxPolicy(for: other))
        }
        return try policy.withSystemCallFilter(plugin: plugin.manifest.id)
    }
}

extension GenerationMaker {
    /// `plugin` as it may run: as it is when the user's trust lets it join the worker group
    /// its manifest names (`GroupConsent`), else without the group, after a `denied` event
    /// that names the plugin, the group and the fix.
    func consentedToGroup(_ plugin: ValidatedPlugin) -> ValidatedPlugin {
        guard let group = plugin.manifest.isolationGroup else { return plugin }
        switch GroupConsent(configured: configuration.groups).decide(plugin, group: group, members: runningMembers(of: group),
                                                                     others: otherPlugins(naming: group, besides: plugin)) {
        case .joins:
            return plugin
        case .alone(let reason):
            events.emit(.denied, .plugin(plugin.manifest.id), reason)
            var alone = plugin
            alone.manifest.isolationGroup = nil
            return alone
        }
    }

    /// The discovered plugins other than `plugin` whose manifests name `group`.
    func otherPlugins(naming group: String, besides plugin: ValidatedPlugin) -> [ValidatedPlugin] {
        registry.records.values.map(\.source).filter { $0.manifest.isolationGroup == group && $0.manifest.id != plugin.manifest.id }
    }

    /// The plugins in `group`'s running worker.
    func runningMembers(of group: String) -> [ValidatedPlugin] {
        guard let worker = workerGroups.open(group)?.worker.pid else { return [] }
        return registry.records.values.compactMap(\.generation).filter { $0.isolation == .process && $0.workerPID == worker }.map(\.source)
    }
}
