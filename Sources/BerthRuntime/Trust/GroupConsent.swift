@_spi(Engine) import BerthCore
/// Whether a plugin may share the worker its manifest's group names (`"isolation":
/// {"group": NAME}`). Members of a group share one process: each can read and write the
/// others' memory and act with their handles, so a group is one trust domain, and joining
/// one is the user's decision, never the manifest's alone. A plugin joins when
/// - the host's configuration names the group (`--group NAME=ID,ID`) and lists the plugin, or
/// - the configuration does not name the group, and the plugin and every member already in
///   the worker are signed by the same trusted key.
/// Otherwise it runs alone in a worker of its own, with one line saying why and the fix.
struct GroupConsent {
    /// `BerthHost.Configuration.groups`.
    let configured: [String: Set<String>]

    enum Decision: Equatable {
        case joins
        /// Runs alone; the one line that says why.
        case alone(String)
    }

    /// Whether `plugin` may join `group`, whose running worker already has `members`;
    /// `others` are the other discovered plugins naming the group. With neither, there is no
    /// one to share with: it takes the group's worker, and a later plugin asks to join it.
    func decide(_ plugin: ValidatedPlugin, group: String, members: [ValidatedPlugin], others: [ValidatedPlugin]) -> Decision {
        let id = plugin.manifest.id
        if members.isEmpty && others.isEmpty && configured[group] == nil { return .joins }
        let fix = "it runs alone in a worker of its own; to let it join, name the group with --group \(group)=\(suggestedMembers(plugin, group: group, members: members, others: others))"
        if let listed = configured[group] {
            guard listed.contains(id) else {
                return .alone("may not join worker group '\(group)': the host's configuration lists only \(listed.sorted().joined(separator: ", ")) in it; \(fix)")
            }
            return .joins
        }
        guard case .trusted(let key) = plugin.signature else {
            return .alone("may not join worker group '\(group)': the host's configuration does not name the group and the plugin is not signed by a trusted key (\(plugin.signature)); \(fix), or sign every member with one trusted key")
        }
        if let other = members.first(where: { !Self.signedAlike($0, key) }) {
            return .alone("may not join worker group '\(group)': it is signed by '\(key.name)' (\(key.shortFingerprint)), but member \(other.manifest.id) is signed by \(other.signature); \(fix), or sign every member with one trusted key")
        }
        return .joins
    }

    /// Whether `plugin` and `other`, both naming `group`, would be let in together (the
    /// group's sandbox covers only those).
    func mayShare(_ plugin: ValidatedPlugin, with other: ValidatedPlugin, group: String) -> Bool {
        if let listed = configured[group] { return listed.contains(plugin.manifest.id) && listed.contains(other.manifest.id) }
        guard case .trusted(let key) = plugin.signature else { return false }
        return Self.signedAlike(other, key)
    }

    private static func signedAlike(_ plugin: ValidatedPlugin, _ key: PluginPublicKey) -> Bool {
        guard case .trusted(let other) = plugin.signature else { return false }
        return other.fingerprint == key.fingerprint
    }

    private func suggestedMembers(_ plugin: ValidatedPlugin, group: String, members: [ValidatedPlugin], others: [ValidatedPlugin]) -> String {
        let ids = Set(configured[group] ?? []).union(members.map(\.manifest.id)).union(others.map(\.manifest.id)).union([plugin.manifest.id])
        return ids.sorted().joined(separator: ",")
    }
}
