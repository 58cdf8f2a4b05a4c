import BerthRuntime

extension ManifestFacts {
    /// The two lists of `contracts`, each with the code's list and the verb a line uses.
    private var contractLists: [(field: String, reported: [String]?, verb: String)] {
        [("provides", description.provides, "provide"), ("consumes", description.consumes, "consume")]
    }

    /// Writes the contracts the code provides and consumes into `manifest["contracts"]`,
    /// each list the manifest does not state itself; an empty list is left out.
    func fillContracts(_ manifest: inout [String: Any]) {
        var contracts = manifest["contracts"] as? [String: Any] ?? [:]
        for (field, reported, _) in contractLists where contracts[field] == nil {
            if let reported, !reported.isEmpty { contracts[field] = reported }
        }
        if !contracts.isEmpty { manifest["contracts"] = contracts }
    }

    /// Each contract one side names and the other does not: one line each. Checked only
    /// for a list the library reports (a C plugin's describe may not).
    func contractMismatches(_ manifest: [String: Any], absentIsEmpty: Bool) -> [String] {
        let stated = manifest["contracts"] as? [String: Any]
        var problems: [String] = []
        for (field, reported, verb) in contractLists {
            guard let reported, let listed = (stated?[field] as? [Any])?.compactMap({ $0 as? String }) ?? (absentIsEmpty ? [] : nil) else { continue }
            let place = "contracts.\(field)"
            for name in reported where !listed.contains(name) {
                problems.append("\(manifestPath): \(place): \(source) \(field) '\(name)', plugin.json's \(place) does not list it")
            }
            for name in listed where !reported.contains(name) {
                problems.append("\(manifestPath): \(place): plugin.json lists '\(name)', \(source) does not \(verb) it (it \(field) \(Self.list(reported)))")
            }
        }
        return problems
    }
}
