/// Which plugin a route names: `"plugin.id/route"` as written, or a bare route the one
/// loaded (or crashed, or lazy) plugin that declares it provides.
@MainActor
struct RouteResolver {
    let registry: PluginRegistry

    func resolve(_ route: String) throws(ScreenError) -> (plugin: String, route: String) {
        // By bytes: '/' is ASCII, and a Character search breaks graphemes on every open.
        if let slash = route.utf8.lastIndex(of: UInt8(ascii: "/")) {
            return (String(route[..<slash]), String(route[route.utf8.index(after: slash)...]))
        }
        // Loaded plugins, crashed ones (their next use starts them again) and lazy ones
        // (their first use loads them).
        let providers = registry.records.values.filter { $0.source.manifest.routes.contains(route) }
        let owners = providers.filter { $0.state != .discovered || $0.deferred }.map(\.source.manifest.id).sorted()
        guard owners.count == 1, let owner = owners.first else {
            throw ScreenError(.unknownRoute, screen: nil, owners.isEmpty
                ? unavailableRouteReason(route, unloaded: providers.map(\.source.manifest.id).sorted())
                : "route '\(route)' is provided by \(owners.joined(separator: " and ")); name one as PLUGIN/ROUTE")
        }
        return (owner, route)
    }

    /// Why no plugin can open `route`: its plugin is not loaded, or is invalid (and why).
    private func unavailableRouteReason(_ route: String, unloaded: [String]) -> String {
        if let id = unloaded.first {
            return "route '\(route)' is provided by \(id), which is not loaded (load \(id))"
        }
        if let invalid = registry.rejected.first(where: { $0.routes.contains(route) }) {
            return "route '\(route)' is provided by \(invalid.id ?? invalid.folder), which is invalid: \(invalid.reason)"
        }
        return "no loaded plugin provides route '\(route)'"
    }

    /// Why `pluginID` has no generation to open a screen with.
    func notLoadedReason(_ pluginID: String) -> String {
        if let invalid = registry.rejected.first(where: { $0.id == pluginID }) {
            return "\(pluginID) is invalid: \(invalid.reason)"
        }
        return "\(pluginID) is not loaded (load it first)"
    }
}
