@_spi(Engine) import BerthCore
/// Which plugin a route names: its plugin id when it has one, else the one loaded (or
/// crashed, or lazy) plugin that declares the bare route.
@MainActor
struct RouteResolver {
    let registry: PluginRegistry

    func resolve(_ target: Route) throws(ScreenError) -> (plugin: String, route: String) {
        let route = target.name
        if let pluginID = target.pluginID { return (pluginID, route) }
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
