@_spi(Engine) import BerthCore
import Foundation

/// What a scan of the plugins folders found: valid plugins by id, and the folders that
/// failed validation with every problem.
public struct DiscoveryResult: Sendable {
    /// The folders that validated, one plugin each.
    package var plugins: [ValidatedPlugin] = []
    /// The folders that did not validate, with their problems.
    public var rejected: [RejectedPlugin] = []
    /// Trusted-key files or revocation lines that could not be read.
    public var trustProblems: [PluginProblem] = []
    /// Contracts a valid plugin consumes that no valid plugin provides (warnings).
    public var unprovidedContracts: [UnprovidedContract] = []
}

/// A plugin folder that did not validate. It is reported and skipped; the others load.
public struct RejectedPlugin: Sendable {
    /// The folder.
    public var folder: String
    /// The manifest's id when it could be read.
    public var id: String?
    /// Every problem found in it.
    public var problems: [PluginProblem]
    /// The routes its manifest names, when it could be read (so opening one can say why
    /// the plugin is not there).
    public var routes: [String] = []

    /// Its first error, or its first problem.
    public var reason: String {
        problems.firstError?.description ?? "invalid"
    }
}

/// Finds plugins: every sub-folder of a plugins folder that holds a `plugin.json`.
/// `package`: for the CLI's folder commands (`list`, `new`, `pack`, `keygen`, `validate`).
package enum PluginDiscovery {
    /// Scans `folders` in order, judging signatures by `signatures`. A second plugin with
    /// an id already found is rejected.
    package static func scan(_ folders: [String], signatures: SignaturePolicy = SignaturePolicy()) -> DiscoveryResult {
        var result = DiscoveryResult()
        let trust = signatures.loadTrustedKeys()
        result.trustProblems = trust.problems
        var seen: [String: String] = [:]
        for folder in folders {
            for pluginFolder in pluginFolders(in: folder) {
                switch PluginValidator.validate(path: pluginFolder, trust: trust, requireSignature: signatures.requireSignature) {
                case .success(let plugin):
                    if let first = seen[plugin.manifest.id] {
                        result.rejected.append(RejectedPlugin(folder: pluginFolder, id: plugin.manifest.id, problems: [
                            PluginProblem(path: plugin.manifestPath, field: "id",
                                          message: "'\(plugin.manifest.id)' is already provided by \(first)"),
                        ]))
                        continue
                    }
                    seen[plugin.manifest.id] = pluginFolder
                    result.plugins.append(plugin)
                case .failure(let failure):
                    let fields = manifestFields(in: pluginFolder)
                    result.rejected.append(RejectedPlugin(folder: pluginFolder, id: fields?["id"] as? String, problems: failure.problems,
                                                          routes: (fields?["routes"] as? [Any])?.compactMap { $0 as? String } ?? []))
                }
            }
        }
        result.unprovidedContracts = UnprovidedContract.find(among: result.plugins.map(\.manifest), place: UnprovidedContract.place(of: folders))
        return result
    }

    /// Every sub-folder of `folder` (to watch; a manifest may arrive later).
    static func subfolders(of folder: String) -> [String] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
        return entries.sorted().map { (folder as NSString).appendingPathComponent($0) }.filter { path in
            var isFolder: ObjCBool = false
            return FileManager.default.fileExists(atPath: path, isDirectory: &isFolder) && isFolder.boolValue
        }
    }

    /// Sub-folders of `folder` holding a manifest, sorted by name for a stable order.
    package static func pluginFolders(in folder: String) -> [String] {
        guard let entries = try? FileManager.default.contentsOfDirectory(atPath: folder) else { return [] }
        return entries.sorted().compactMap { entry in
            let path = (folder as NSString).appendingPathComponent(entry)
            let manifest = (path as NSString).appendingPathComponent(PluginValidator.manifestFileName)
            return FileManager.default.fileExists(atPath: manifest) ? path : nil
        }
    }

    /// The top-level fields of a manifest that failed validation, when it is a JSON object.
    private static func manifestFields(in folder: String) -> [String: Any]? {
        let path = (folder as NSString).appendingPathComponent(PluginValidator.manifestFileName)
        guard let data = RawFile.contents(path, limit: PluginManifest.Limits.fileBytes) else { return nil }
        return try? JSONSerialization.jsonObject(with: data) as? [String: Any]
    }
}
