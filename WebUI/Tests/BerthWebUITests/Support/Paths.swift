import Foundation
import Testing

/// Where the tests find what they run: the Berth checkout (this package's parent), its
/// build of the plugins and the worker (`swift build` at the root), and this package's
/// `berth-web` (built with the tests).
enum Paths {
    /// WebUI/.
    static let package = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().path
    /// The Berth checkout.
    static let root = (package as NSString).deletingLastPathComponent
    /// The root package's debug build (plugins, berth, berth-worker); `$BERTH_ROOT_BUILD` names another.
    static let rootBuild = ProcessInfo.processInfo.environment["BERTH_ROOT_BUILD"] ?? root + "/.build/debug"
    /// This package's build folder (the test bundle's own).
    static var webBuild: String {
        let bundle = Bundle.main.bundlePath
        // The test runner sits in the build folder (…/.build/debug/BerthWebUIPackageTests.xctest).
        for candidate in [bundle, (bundle as NSString).deletingLastPathComponent] where FileManager.default.fileExists(atPath: candidate + "/berth-web") {
            return candidate
        }
        return package + "/.build/debug"
    }

    /// `berth-web`, or a one-line failure saying how to build it.
    static func berthWeb() throws -> String {
        let path = webBuild + "/berth-web"
        try #require(FileManager.default.isExecutableFile(atPath: path), "no \(path): run scripts/build-web (or swift build in WebUI)")
        return path
    }

    /// A library of the root build, or a one-line failure saying how to build it.
    static func rootProduct(_ name: String) throws -> String {
        let path = rootBuild + "/" + name
        try #require(FileManager.default.fileExists(atPath: path), "no \(path): run swift build at the Berth root first")
        return path
    }
}

/// A scratch folder with a plugins folder, removed when the test is done.
final class Workspace {
    let root: String
    var plugins: String { root + "/plugins" }

    init() throws {
        root = NSTemporaryDirectory() + "berth-web-test-" + UUID().uuidString.prefix(8)
        try FileManager.default.createDirectory(atPath: root + "/plugins", withIntermediateDirectories: true)
    }

    deinit {
        try? FileManager.default.removeItem(atPath: root)
    }

    /// Stages the example plugins as `scripts/stage-plugins` does.
    func stageExamples() throws {
        let stage = Process()
        stage.executableURL = URL(fileURLWithPath: Paths.root + "/scripts/stage-plugins")
        stage.arguments = [Paths.rootBuild, plugins]
        stage.standardOutput = FileHandle.nullDevice
        try stage.run()
        stage.waitUntilExit()
        try #require(stage.terminationStatus == 0, "scripts/stage-plugins failed: run swift build at the Berth root first")
    }

    /// Stages a plugin from the root build: `manifest` (a file of manifests/ or JSON) with its library.
    func stage(manifest: [String: Any], library: String) throws {
        let id = try #require(manifest["id"] as? String)
        let folder = plugins + "/" + id
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: try Paths.rootProduct(library), toPath: folder + "/" + library)
        let data = try JSONSerialization.data(withJSONObject: manifest, options: [.sortedKeys])
        try data.write(to: URL(fileURLWithPath: folder + "/plugin.json"))
    }

    /// A manifest of manifests/ as a dictionary (to stage it changed).
    static func manifest(_ file: String) throws -> [String: Any] {
        let data = try Data(contentsOf: URL(fileURLWithPath: Paths.root + "/manifests/" + file))
        return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    /// Sets `isolation` in the manifest of every plugin staged so far.
    func setIsolationOfAll(_ isolation: String) throws {
        for id in try FileManager.default.contentsOfDirectory(atPath: plugins) {
            let path = plugins + "/" + id + "/plugin.json"
            var manifest = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: path))) as? [String: Any])
            manifest["isolation"] = isolation
            try JSONSerialization.data(withJSONObject: manifest).write(to: URL(fileURLWithPath: path))
        }
    }

    /// The crasher fixture, routes `HOW-WHEN`, in a worker.
    func stageCrasher() throws {
        let hows = ["segv", "abort"]
        let whens = ["action", "render", "task"]
        try stage(manifest: [
            "id": "org.berth.crasher", "name": "Crasher", "version": "1.0.0", "abi": "1.0", "library": "libBerthCrasher.so",
            "entry": "berth_crasher_entry_v1", "runtime": "c", "isolation": "process",
            "routes": ["ok"] + hows.flatMap { how in whens.map { "\(how)-\($0)" } },
        ], library: "libBerthCrasher.so")
    }
}
