import BerthRuntime

extension ManifestFacts {
    /// The manifest's `actions` as the code declares them: a name alone, or
    /// `{name, summary}`; only the routes that declare some (nil when none does).
    var generatedActions: [String: [Any]]? {
        let declared = (description.actions ?? [:]).filter { !$0.value.isEmpty }
        guard !declared.isEmpty else { return nil }
        return declared.mapValues { actions in
            actions.map { action -> Any in
                action.summary.map { ["name": action.name, "summary": $0] } ?? action.name
            }
        }
    }

    /// Each action one side declares for a route and the other does not: one line each.
    /// Checked only when the library reports `actions` (a C plugin's describe may not).
    func actionMismatches(_ manifest: [String: Any], absentIsEmpty: Bool) -> [String] {
        guard let reported = description.actions else { return [] }
        guard let stated = Self.actionNames(manifest["actions"]) ?? (absentIsEmpty ? [:] : nil) else { return [] }
        var problems: [String] = []
        for route in reported.keys.sorted() {
            let listed = stated[route] ?? []
            for action in reported[route] ?? [] where !listed.contains(action.name) {
                problems.append("\(manifestPath): actions: \(source) declares the action '\(action.name)' for '\(route)', plugin.json's actions do not list it")
            }
        }
        for route in stated.keys.sorted() {
            let declared = (reported[route] ?? []).map(\.name)
            for name in stated[route] ?? [] where !declared.contains(name) {
                problems.append("\(manifestPath): actions: plugin.json lists the action '\(name)' for '\(route)', \(source) does not declare it (it declares \(Self.list(declared)))")
            }
        }
        return problems
    }

    /// Route → action names from a manifest's `actions` value (entries as names or objects).
    private static func actionNames(_ value: Any?) -> [String: [String]]? {
        guard let object = value as? [String: Any] else { return nil }
        return object.mapValues { entries in
            (entries as? [Any] ?? []).compactMap { $0 as? String ?? ($0 as? [String: Any])?["name"] as? String }
        }
    }
}
