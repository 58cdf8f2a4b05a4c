import BerthRuntime

extension PluginManifest {
    /// Every way `open` can name this plugin's routes: bare, and as PLUGIN/ROUTE.
    var openableRoutes: [String] {
        routes + routes.map { "\(id)/\($0)" }
    }
}
