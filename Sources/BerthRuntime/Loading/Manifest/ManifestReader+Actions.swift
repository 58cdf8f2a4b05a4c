@_spi(Engine) import BerthCore
extension ManifestReader {
    /// `actions`: route → the actions its screen accepts, each a name or
    /// `{"name": …, "summary": …}`. Every route must be one the manifest lists.
    mutating func readActions(_ fields: [String: Any], routes: [String]) -> [String: [DeclaredAction]] {
        guard let value = fields["actions"] else { return [:] }
        guard let object = value as? [String: Any] else {
            fail("actions", "must be an object mapping routes to lists of action names or {name, summary}")
            return [:]
        }
        var actions: [String: [DeclaredAction]] = [:]
        for route in object.keys.sorted() {
            let field = "actions.\(route)"
            guard routes.contains(route) else {
                fail(field, "\(quoted(route)) is not a route this manifest lists (routes: \(routes.isEmpty ? "none" : routes.joined(separator: ", ")))")
                continue
            }
            guard let list = object[route] as? [Any] else {
                fail(field, "must be an array of action names or {name, summary}")
                continue
            }
            guard list.count <= PluginManifest.Limits.listEntries else {
                fail(field, "has \(list.count) entries; at most \(PluginManifest.Limits.listEntries) are allowed")
                continue
            }
            var declared: [DeclaredAction] = []
            for (index, item) in list.enumerated() {
                guard let action = readAction(item, field: "\(field)[\(index)]") else { continue }
                guard !declared.contains(where: { $0.name == action.name }) else {
                    fail("\(field)[\(index)]", "\(quoted(action.name)) is listed twice")
                    continue
                }
                declared.append(action)
            }
            actions[route] = declared
        }
        return actions
    }

    /// One entry: a name, or an object with a name and an optional one-line summary.
    private mutating func readAction(_ item: Any, field: String) -> DeclaredAction? {
        let expected = "an action name of letters, digits, '-', '_' or '.' starting with a letter"
        if let name = item as? String {
            guard DeclaredAction.isValidName(name) else {
                fail(field, "\(quoted(name)) is not \(expected)")
                return nil
            }
            return DeclaredAction(name: name)
        }
        guard let object = item as? [String: Any] else {
            fail(field, "must be an action name or {name, summary}")
            return nil
        }
        for unknown in object.keys.filter({ !["name", "summary"].contains($0) }).sorted() {
            warn("\(field).\(unknown)", "unknown field (expected \"name\" or \"summary\")")
        }
        guard let name = object["name"] as? String, DeclaredAction.isValidName(name) else {
            fail("\(field).name", "\(object["name"].map { quoted($0) } ?? "(missing)") is not \(expected)")
            return nil
        }
        guard let rawSummary = object["summary"] else { return DeclaredAction(name: name) }
        guard let summary = rawSummary as? String, !summary.contains(where: \.isNewline),
              summary.count <= DeclaredAction.summaryLimit else {
            fail("\(field).summary", "must be one line of text of at most \(DeclaredAction.summaryLimit) characters")
            return nil
        }
        return DeclaredAction(name: name, summary: summary)
    }
}
