@_spi(Engine) import BerthCore
extension ManifestReader {
    /// `{"provides": [NAME, …], "consumes": [NAME, …]}`, both optional.
    mutating func readContracts(_ fields: [String: Any]) -> PluginContracts {
        guard let value = fields["contracts"] else { return PluginContracts() }
        guard let object = value as? [String: Any] else {
            fail("contracts", "must be an object such as {\"provides\": [\"org.example.Clock\"], \"consumes\": []}")
            return PluginContracts()
        }
        for unknown in object.keys.filter({ !PluginContracts.fields.contains($0) }).sorted() {
            warn("contracts.\(unknown)", "unknown field (expected \"provides\" or \"consumes\")")
        }
        let expected = "a contract name of letters, digits, '-', '_' or '.' starting with a letter (at most \(ManifestNames.contractNameBytes) bytes)"
        return PluginContracts(
            provides: readStringList(object, "provides", rule: ManifestNames.isContractName, expected: expected, prefix: "contracts."),
            consumes: readStringList(object, "consumes", rule: ManifestNames.isContractName, expected: expected, prefix: "contracts.")
        )
    }
}
