@_spi(Engine) import BerthRuntime

extension HostShell {
    /// The line a failed command prints: the error and, for a route or a plugin id nobody
    /// knows, " (did you mean '…'?)". When `open ID/route` names an id no plugin has and a
    /// route resembles it, the did-you-mean alone: the host's "not loaded (load it first)"
    /// would send the reader to load a plugin that does not exist.
    func failureLine(_ error: any Error, command: String, arguments: [String]) -> String {
        guard let word = arguments.first, let closest = closestKnown(command: command, word: word) else { return "\(error)" }
        if ["open", "present"].contains(command), !(error is Route.SyntaxError), let slash = word.lastIndex(of: "/"),
           host.plugins[String(word[..<slash])] == nil {
            return "\(word): did you mean '\(closest)'?"
        }
        return "\(error) (did you mean '\(closest)'?)"
    }

    /// The known route or plugin id closest to a command's unknown `word`, if any.
    private func closestKnown(command: String, word: String) -> String? {
        switch command {
        case "open", "present":
            let routes = host.plugins.values.flatMap(\.source.manifest.openableRoutes)
            return routes.contains(word) ? nil : Suggestion.closest(to: word, among: routes.sorted())
        case "load", "unload", "reload", "call":
            return host.plugins[word] != nil || word.contains("/") ? nil : Suggestion.closest(to: word, among: host.plugins.keys.sorted())
        default:
            return nil
        }
    }
}
