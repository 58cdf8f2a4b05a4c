import ArgumentParser
@_spi(Engine) import BerthRuntime

/// What the shell completion scripts (`berth --generate-completion-script bash|zsh|fish`)
/// offer beyond options: plugin ids and routes read from the plugins folders named on the
/// command line (`--plugins DIR`, else ./plugins), host commands after `berth host`, and
/// paths where a path goes.
enum ShellCompletion {
    /// Plugin ids (`berth call ID`, `berth reload ID`, `berth unload ID`).
    static let pluginIDs = CompletionKind.custom { words, _, prefix in
        manifests(words).map(\.id).filter { $0.hasPrefix(prefix) }.sorted()
    }

    /// `berth host COMMAND ARGS…`: a host command, then what that command takes.
    static let hostCommand = CompletionKind.custom { words, index, prefix in
        let hostIndex = words.firstIndex(of: "host") ?? 0
        let before = words.indices.contains(index) ? Array(words[(hostIndex + 1)..<max(hostIndex + 1, index)]) : []
        let plugins = manifests(words)
        let options: [String] = switch before.first {
        case nil: HostShell.commandNames
        case "open", "present": plugins.flatMap(\.openableRoutes)
        case "load", "unload", "reload", "call": before.count == 1 ? plugins.map(\.id) : []
        default: []
        }
        return options.filter { $0.hasPrefix(prefix) }.sorted()
    }

    /// The valid manifests in the folders given with `--plugins` in `words` (else ./plugins).
    private static func manifests(_ words: [String]) -> [PluginManifest] {
        var folders: [String] = []
        for (index, word) in words.enumerated() {
            if word == "--plugins", index + 1 < words.count { folders.append(words[index + 1]) }
            if word.hasPrefix("--plugins=") { folders.append(String(word.dropFirst("--plugins=".count))) }
        }
        return PluginDiscovery.scan(folders.isEmpty ? ["plugins"] : folders).plugins.map(\.manifest)
    }
}
