import Foundation
import Testing

/// A temporary plugins folder for one test: stage real built libraries with real or
/// edited manifests, break them on purpose, and remove everything at the end.
public final class PluginWorkspace {
    /// The workspace's root (a fresh temporary folder).
    public let root: String
    /// `<root>/plugins`, the folder a host is pointed at.
    public let plugins: String
    /// `<root>/run`, for host runtime folders.
    public let runtimeBase: String

    public init() {
        TestProcess.prepared
        root = (NSTemporaryDirectory() as NSString).appendingPathComponent("berth-test-\(UUID().uuidString.prefix(8))")
        plugins = (root as NSString).appendingPathComponent("plugins")
        runtimeBase = (root as NSString).appendingPathComponent("run")
        attempt("create \(plugins)") { try FileManager.default.createDirectory(atPath: plugins, withIntermediateDirectories: true) }
    }

    /// Runs a setup step; a failure (a missing build product, an unwritable folder) fails
    /// the current test with a message naming what failed, instead of crashing the run.
    private func attempt(_ what: String, _ body: () throws -> Void) {
        do { try body() } catch { Issue.record("workspace setup: \(what): \(error)") }
    }

    deinit {
        try? FileManager.default.removeItem(atPath: root)
    }

    /// A new workspace with the example manifests `manifestNames` staged (see `stage`), made
    /// off the caller's actor: copying the libraries does not hold the main actor.
    public static func staging(_ manifestNames: [String]) async -> sending PluginWorkspace {
        let workspace = PluginWorkspace()
        for name in manifestNames { workspace.stage(name) }
        return workspace
    }

    /// Stages an example manifest (`counter.json`) and its built library into
    /// `plugins/<folder>`, after `edit` changes the manifest's JSON. Returns the folder.
    @discardableResult
    public func stage(
        _ manifestName: String, as folderName: String? = nil, edit: (inout [String: Any]) -> Void = { _ in }
    ) -> String {
        let path = BuildProducts.manifest(manifestName)
        guard let data = FileManager.default.contents(atPath: path),
              var manifest = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any],
              let library = manifest["library"] as? String
        else {
            Issue.record("workspace setup: \(path) is missing or is not a manifest object with a library")
            return (plugins as NSString).appendingPathComponent(folderName ?? manifestName)
        }
        edit(&manifest)
        let folder = (plugins as NSString).appendingPathComponent(folderName ?? (manifest["id"] as? String ?? manifestName))
        attempt("stage \(library) into \(folder)") {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            try FileManager.default.copyItem(atPath: BuildProducts.library(library), toPath: (folder as NSString).appendingPathComponent(library))
        }
        write(manifest: manifest, in: folder)
        return folder
    }

    /// Stages the C fixture library under `id` with the given entry and manifest fields.
    @discardableResult
    public func stageFixture(
        folder folderName: String, entry: String = "fixture_entry_ok", id: String = "org.berth.fixtures",
        edit: (inout [String: Any]) -> Void = { _ in }
    ) -> String {
        let folder = (plugins as NSString).appendingPathComponent(folderName)
        attempt("stage libBerthFixtures.so into \(folder)") {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            try FileManager.default.copyItem(atPath: BuildProducts.library("libBerthFixtures.so"),
                                             toPath: (folder as NSString).appendingPathComponent("libBerthFixtures.so"))
        }
        var manifest: [String: Any] = [
            "id": id, "name": "Fixtures", "version": "1.0.0", "abi": "1.0",
            "library": "libBerthFixtures.so", "entry": entry, "runtime": "c", "routes": ["probe", "fails"],
        ]
        edit(&manifest)
        write(manifest: manifest, in: folder)
        return folder
    }

    /// Writes `manifest` as `plugin.json` in `folder`.
    public func write(manifest: [String: Any], in folder: String) {
        attempt("write \(folder)/plugin.json") {
            let data = try JSONSerialization.data(withJSONObject: manifest, options: [.prettyPrinted, .sortedKeys])
            guard FileManager.default.createFile(atPath: (folder as NSString).appendingPathComponent("plugin.json"), contents: data) else {
                throw CocoaError(.fileWriteUnknown)
            }
        }
    }

    /// Overwrites a file in a plugin folder with raw bytes.
    public func write(_ bytes: [UInt8], to relativePath: String) {
        _ = FileManager.default.createFile(atPath: (plugins as NSString).appendingPathComponent(relativePath), contents: Data(bytes))
    }

    /// The bytes of a file below `plugins`.
    public func read(_ relativePath: String) -> [UInt8] {
        [UInt8](FileManager.default.contents(atPath: (plugins as NSString).appendingPathComponent(relativePath)) ?? Data())
    }
}
