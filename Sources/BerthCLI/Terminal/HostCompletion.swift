@_spi(Engine) import BerthRuntime

/// What Tab offers at the REPL: command names for the first word, then what the command
/// takes there — routes, plugin ids, export symbols, screen ids, declared actions, flags —
/// from the host as it is now.
@MainActor
struct HostCompletion {
    let host: BerthHost

    /// The candidates that start with `word`, given the words before it on the line. An
    /// empty result for a word holding `/` after `load` lets the editor complete a path.
    func candidates(before words: [String], word: String) -> [String] {
        options(before: words).filter { $0.hasPrefix(word) }.sorted()
    }

    private func options(before words: [String]) -> [String] {
        guard let command = words.first else { return HostShell.commandNames }
        let position = words.count
        switch (command, position) {
        case ("open", 1), ("present", 1): return routes
        case ("load", 1): return ["all"] + pluginIDs
        case ("unload", 1), ("reload", 1), ("call", 1): return pluginIDs
        case ("reload", 2): return ["--keep-state"]
        case ("call", 2): return host.plugins[words[1]]?.source.manifest.exports.map(\.symbol) ?? []
        case ("close", 1): return host.openRouters.map { String($0.id) }
        case ("send", 1): return screenNumbers + actions(of: host.visibleRouter)
        case ("send", 2) where words[1].hasPrefix("#"): return actions(of: Int(words[1].dropFirst()).flatMap(host.router))
        case ("actions", 1): return screenNumbers + ["--json"]
        case ("screen", 1): return ["--json"]
        case ("tap", 1), ("toggle", 1), ("type", 1), ("step", 1), ("select", 1): return viewNumbers
        case ("step", 2): return ["+", "-"]
        case ("session", 1): return ["begin", "end"]
        default: return []
        }
    }

    private var pluginIDs: [String] { Array(host.plugins.keys) }

    /// `#N` for every open screen.
    private var screenNumbers: [String] { host.openRouters.map { "#\($0.id)" } }

    /// The action names a screen declares.
    private func actions(of router: Router?) -> [String] {
        router.map { host.declaredActions(of: $0).map(\.name) } ?? []
    }

    /// The numbers `screen` gave the visible screen's interactive views in its last render.
    private var viewNumbers: [String] {
        let views = host.visibleRouter?.module?.lastTree?.allNodes.filter(\.isInteractive) ?? []
        return views.indices.map { String($0 + 1) }
    }

    /// Every route of every known plugin, bare and as PLUGIN/ROUTE.
    private var routes: [String] {
        Array(Set(host.plugins.values.flatMap(\.source.manifest.openableRoutes)))
    }
}
