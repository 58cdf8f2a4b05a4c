@_spi(Engine) import BerthRuntime

extension HostShell {
    /// `actions [#SCREEN] [--json]`: the actions the visible screen (or screen N) declares,
    /// from its plugin's manifest, with their summaries.
    func listActions(_ arguments: [String]) throws {
        guard arguments.allSatisfy({ $0 == "--json" || $0.hasPrefix("#") }) else {
            throw ShellError("usage: actions [#SCREEN] [--json]")
        }
        let router = try targetRouter(arguments.first { $0.hasPrefix("#") })
        let actions = host.declaredActions(of: router)
        if arguments.contains("--json") {
            emitLine(try JSONText.encode(actions))
            return
        }
        let screen = "screen \(router.id) \(router.pluginID)/\(router.route)"
        guard !actions.isEmpty else {
            emitLine("\(screen): \(router.pluginID) declares no actions for '\(router.route)' (send passes any name to it)")
            return
        }
        let table = TextTable(header: ["ACTION", "SUMMARY"])
        for action in actions { table.add([action.name, action.summary ?? ""]) }
        // An action without a summary leaves its row's padding: no trailing spaces.
        let rows = table.render().split(separator: "\n").map { $0.replacing(/\ +$/, with: "") }
        emitLine("\(screen) accepts:\n" + rows.joined(separator: "\n"))
    }

    /// Refuses an action the screen does not declare, when it declares some; a screen that
    /// declares none is sent any name.
    func checkDeclared(_ action: String, by router: Router) throws {
        let names = host.declaredActions(of: router).map(\.name)
        guard !names.isEmpty, !names.contains(action) else { return }
        throw ShellError("\(router.pluginID)/\(router.route) declares no action '\(action)'\(Suggestion.hint(for: action, among: names));"
                         + " not sent (it declares \(names.joined(separator: ", ")))")
    }

    /// The open screen `#N` names, else the visible one.
    func targetRouter(_ word: String?) throws -> Router {
        if let word {
            let id = try screenID(String(word.dropFirst()))
            guard let router = host.router(id) else { throw ShellError("no open screen \(id)") }
            return router
        }
        guard let router = host.visibleRouter else { throw ShellError("no screen is open") }
        return router
    }
}
