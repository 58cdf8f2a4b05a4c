import BerthRuntime
import Foundation

/// The facts a plugin's code states (its id, routes, actions and persisted keys, its
/// services, contracts and exports) set against a manifest. For a Swift plugin the code is the one
/// place they are written, and `pack` writes them into the manifest; for a C plugin the
/// manifest is hand-written and checked against what its `berth_describe_v1` reports. Each
/// disagreement is one line naming the fact and both places.
struct ManifestFacts {
    let description: LibraryDescription
    /// Where the manifest was read from (or would be), for the lines.
    let manifestPath: String
    let library: String

    var source: String { "\((library as NSString).lastPathComponent) (\(description.describes ? "berth_describe_v1" : "its table"))" }

    /// Writes the generated facts into `manifest`: a fact it already states must agree
    /// with the code. Returns the disagreements.
    func fill(_ manifest: inout [String: Any]) -> [String] {
        var problems = check(manifest, absentIsEmpty: false)
        let generated: [(String, Any)] = [
            ("id", description.id), ("abi", description.abi), ("entry", description.entry),
            ("library", (library as NSString).lastPathComponent), ("runtime", description.runtime ?? "swift"),
            ("routes", description.routes ?? []), ("persist", description.persist ?? []),
        ]
        for (field, value) in generated where manifest[field] == nil { manifest[field] = value }
        if manifest["actions"] == nil, let actions = generatedActions { manifest["actions"] = actions }
        fillContracts(&manifest)
        // Stated in code (`Plugin(capabilities:)`): the manifest grants exactly those.
        if manifest["capabilities"] == nil, let capabilities = description.capabilities { manifest["capabilities"] = capabilities }
        if manifest["name"] == nil { manifest["name"] = Self.libraryName(library) }
        if manifest["version"] == nil { manifest["version"] = "0.1.0" }
        if (manifest["persist"] as? [String])?.isEmpty == true { manifest["persist"] = nil }
        // A manifest may name an earlier minor than its library (minors only append), as the
        // host's handshake allows.
        if let stated = manifest["abi"] as? String, !Self.abi(stated, accepts: description.abi), !problems.contains(where: { $0.contains(": abi: ") }) {
            problems.append("\(manifestPath): abi: plugin.json says \(stated), \(source) reports \(description.abi)")
        }
        return problems
    }

    /// Whether a manifest naming ABI `stated` fits a library reporting `reported`: the same
    /// major, and a minor no later than the library's.
    static func abi(_ stated: String, accepts reported: String) -> Bool {
        let parts = { (text: String) in text.split(separator: ".").compactMap { UInt32($0) } }
        let (manifest, library) = (parts(stated), parts(reported))
        guard manifest.count == 2, library.count == 2 else { return stated == reported }
        return manifest[0] == library[0] && manifest[1] <= library[1]
    }

    /// The disagreements between the facts `manifest` states and the library's. With
    /// `absentIsEmpty` a missing list states that there is nothing (a hand-written
    /// manifest without `persist` declares no key); otherwise it is left to be filled.
    func check(_ manifest: [String: Any], absentIsEmpty: Bool = true) -> [String] {
        var problems: [String] = []
        if let id = manifest["id"] as? String, id != description.id {
            problems.append("\(manifestPath): id: plugin.json says '\(id)', \(source) says '\(description.id)'")
        }
        if let entry = manifest["entry"] as? String, entry != description.entry {
            problems.append("\(manifestPath): entry: plugin.json names '\(entry)', \(source) exports '\(description.entry)'")
        }
        guard description.describes else { return problems }
        if let routes = description.routes, let stated = list("routes", in: manifest, absentIsEmpty) {
            for route in routes where !stated.contains(route) {
                problems.append("\(manifestPath): routes: \(source) creates '\(route)', plugin.json's routes do not list it")
            }
            for route in stated where !routes.contains(route) {
                problems.append("\(manifestPath): routes: plugin.json lists '\(route)', \(source) cannot create it (it creates \(Self.list(routes)))")
            }
        }
        if let keys = description.persist, let declared = list("persist", in: manifest, absentIsEmpty) {
            for key in keys where !declared.contains(key) {
                problems.append("\(manifestPath): persist: \(source) uses the persisted key '\(key)', plugin.json's persist does not declare it")
            }
        }
        problems += actionMismatches(manifest, absentIsEmpty: absentIsEmpty)
        problems += contractMismatches(manifest, absentIsEmpty: absentIsEmpty)
        let exported = Set((manifest["exports"] as? [[String: Any]] ?? []).compactMap { $0["symbol"] as? String })
        for symbol in description.exports ?? [] where !exported.contains(symbol) {
            problems.append("\(manifestPath): exports: \(source) reports the export '\(symbol)', plugin.json's exports do not list it")
        }
        return problems
    }

    /// A hand-written manifest checked against its library, described in a child process;
    /// nil (after a warning) when the library could not be described.
    static func mismatches(of manifest: [String: Any], manifestPath: String, library: String) -> [String]? {
        do {
            let description = try LibraryFacts.describe(library, entry: manifest["entry"] as? String)
            return ManifestFacts(description: description, manifestPath: manifestPath, library: library).check(manifest)
        } catch {
            FileHandleOutput.standardError("warning: \(error); plugin.json was not checked against the library\n")
            return nil
        }
    }

    private func list(_ field: String, in manifest: [String: Any], _ absentIsEmpty: Bool) -> [String]? {
        if let values = manifest[field] as? [String] { return values }
        return absentIsEmpty ? [] : nil
    }

    static func list(_ names: [String]) -> String {
        names.isEmpty ? "none" : names.map { "'\($0)'" }.joined(separator: ", ")
    }

    /// `libHello.so` → `Hello`.
    private static func libraryName(_ library: String) -> String {
        var name = ((library as NSString).lastPathComponent as NSString).deletingPathExtension
        if name.hasPrefix("lib") { name.removeFirst(3) }
        return name
    }
}
