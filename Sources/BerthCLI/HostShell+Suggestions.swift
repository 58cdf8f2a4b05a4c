import BerthRuntime

extension HostShell {
    /// " (did you mean '…'?)" for a command that failed on a route or a plugin id nobody
    /// knows, naming the closest known one; empty otherwise.
    func suggestion(command: String, arguments: [String]) -> String {
        guard let word = arguments.first else { return "" }
        switch command {
        case "open", "present":
            let routes = host.plugins.values.flatMap(\.source.manifest.openableRoutes)
            return routes.contains(word) ? "" : Suggestion.hint(for: word, among: routes.sorted())
        case "load", "unload", "reload", "call":
            return host.plugins[word] != nil || word.contains("/") ? "" : Suggestion.hint(for: word, among: host.plugins.keys.sorted())
        default:
            return ""
        }
    }
}
