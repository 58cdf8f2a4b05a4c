@_spi(Engine) import BerthCore
/// A contract a plugin consumes (its manifest's `contracts.consumes`) that no plugin found
/// beside it provides: its calls will answer `BERTH_ERR_NOT_FOUND`. A warning, found from
/// manifests alone, by discovery (a host event at start) and by `berth validate`.
public struct UnprovidedContract: Sendable, Hashable, CustomStringConvertible {
    /// The consuming plugin's id.
    public var consumer: String
    /// The contract's name.
    public var contract: String
    /// Where providers were looked for, as the line names it (`plugins/`, `plugins/ or extra/`).
    public var place: String

    /// What the consumer's event says (its subject names the consumer).
    public var message: String { "consumes \(contract), which no plugin in \(place) provides" }
    /// `org.berth.alarm consumes org.berth.Clock, which no plugin in plugins/ provides`.
    public var description: String { "\(consumer) \(message)" }

    /// Each contract a manifest of `manifests` consumes and none provides, in the manifests'
    /// order. `place` names where they were found.
    package static func find(among manifests: [PluginManifest], place: String) -> [UnprovidedContract] {
        let provided = Set(manifests.flatMap(\.contracts.provides))
        return manifests.flatMap { manifest in
            manifest.contracts.consumes.filter { !provided.contains($0) }.map {
                UnprovidedContract(consumer: manifest.id, contract: $0, place: place)
            }
        }
    }

    /// `plugins/`, or `plugins/ or extra/`: folders as a line names them.
    package static func place(of folders: [String]) -> String {
        folders.map { $0.hasSuffix("/") ? $0 : $0 + "/" }.joined(separator: " or ")
    }
}
