@_spi(Engine) import BerthRuntime
import Foundation
import Logging

/// Where the plugin libraries come from and where they are staged.
///
/// The libraries are looked up, in order, in `$BERTH_BUILD_DIR`, beside this benchmark's
/// own executable (when SwiftPM built the root package's dynamic products into
/// `Benchmarks/.build`), then in the root package's `.build/release` and `.build/debug`.
enum BuildProducts {
    /// The Benchmarks package folder (this file is Benchmarks/Benchmarks/LoaderBenchmarks/…).
    static let benchmarksPackage: String = {
        var folder = (#filePath as NSString).deletingLastPathComponent // LoaderBenchmarks
        folder = (folder as NSString).deletingLastPathComponent        // Benchmarks/Benchmarks
        return (folder as NSString).deletingLastPathComponent          // Benchmarks
    }()

    /// The root package (Berth) folder.
    static let rootPackage = (benchmarksPackage as NSString).deletingLastPathComponent

    /// The folder holding this benchmark's executable.
    static let executableFolder: String = {
        let executable = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
            ?? CommandLine.arguments[0]
        return (executable as NSString).deletingLastPathComponent
    }()

    /// The folders searched for a library, in order.
    static var searchFolders: [String] {
        var folders: [String] = []
        if let override = ProcessInfo.processInfo.environment["BERTH_BUILD_DIR"], !override.isEmpty {
            folders.append(override)
        }
        folders.append(executableFolder)
        folders.append((rootPackage as NSString).appendingPathComponent(".build/release"))
        folders.append((rootPackage as NSString).appendingPathComponent(".build/debug"))
        return folders
    }

    /// The first built copy of `library` (`libGreeter.so`); stops the process with the
    /// command that builds it when there is none.
    static func library(_ library: String) -> String {
        for folder in searchFolders {
            let path = (folder as NSString).appendingPathComponent(library)
            if FileManager.default.isReadableFile(atPath: path) { return path }
        }
        fatalError("""
            \(library) not found in: \(searchFolders.joined(separator: ", ")).
            Build them beside the benchmark first, from the Benchmarks folder:
              swift build -c release --product Greeter && swift build -c release --product Counter
            or point BERTH_BUILD_DIR at a folder that holds them.
            """)
    }

    /// An example manifest from the root package's manifests/ folder.
    static func manifest(_ name: String) -> String {
        ((rootPackage as NSString).appendingPathComponent("manifests") as NSString).appendingPathComponent(name)
    }
}

/// One example plugin as the benchmarks use it: its manifest facts and built library.
struct ExamplePlugin: Sendable {
    var manifestFile: String
    var id: String
    var library: String
    var entry: String
    /// The manifest itself, for a test fixture that has no file in manifests/.
    var inlineManifest: String? = nil

    static let greeter = ExamplePlugin(
        manifestFile: "greeter.json", id: "com.example.greeter", library: "libGreeter.so", entry: "berth_greeter_entry_v1"
    )
    static let counter = ExamplePlugin(
        manifestFile: "counter.json", id: "com.example.counter", library: "libCounter.so", entry: "berth_counter_entry_v1"
    )

    /// A C test fixture, with its manifest written here: no file in manifests/ describes it.
    static func cFixture(id: String, name: String, library: String, entry: String, routes: [String]) -> ExamplePlugin {
        let routeList = routes.map { "\"\($0)\"" }.joined(separator: ", ")
        return ExamplePlugin(
            manifestFile: "", id: id, library: library, entry: entry,
            inlineManifest: """
            {"id": "\(id)", "name": "\(name)", "version": "1.0.0", "abi": "1.0", "library": "\(library)",
             "entry": "\(entry)", "runtime": "c", "routes": [\(routeList)]}
            """
        )
    }

    /// The built library this run uses.
    var builtLibrary: String { BuildProducts.library(library) }
}

/// A temporary folder holding `plugins/<id>/{plugin.json, lib…so}` (what
/// scripts/stage-plugins makes), `run/` for the host's runtime folder and `raw/` for the
/// baselines' copies. Removed by `remove()`.
final class StagedPlugins: Sendable {
    let root: String
    let plugins: String
    let runtimeBase: String
    let raw: String

    /// Where staging folders go: `$BERTH_BENCH_TMPDIR` (e.g. /dev/shm, a tmpfs like the
    /// `$XDG_RUNTIME_DIR` Berth uses by default), else the temporary folder. The host's
    /// runtime folder (shadow copies) and the baselines' copies live here too, so its file
    /// system is part of every load figure.
    static var parent: String {
        if let folder = ProcessInfo.processInfo.environment["BERTH_BENCH_TMPDIR"], !folder.isEmpty { return folder }
        return NSTemporaryDirectory()
    }

    /// Stages `staged`; with `group`, each manifest names that worker group.
    init(_ staged: [ExamplePlugin], group: String? = nil) throws {
        let fileManager = FileManager.default
        root = (Self.parent as NSString).appendingPathComponent("berth-bench-\(getpid())-\(UUID().uuidString.prefix(8))")
        plugins = (root as NSString).appendingPathComponent("plugins")
        runtimeBase = (root as NSString).appendingPathComponent("run")
        raw = (root as NSString).appendingPathComponent("raw")
        for folder in [plugins, runtimeBase, raw] {
            try fileManager.createDirectory(atPath: folder, withIntermediateDirectories: true)
        }
        for plugin in staged {
            let folder = (plugins as NSString).appendingPathComponent(plugin.id)
            try fileManager.createDirectory(atPath: folder, withIntermediateDirectories: true)
            let manifest = (folder as NSString).appendingPathComponent("plugin.json")
            if let inline = plugin.inlineManifest {
                try Data(inline.utf8).write(to: URL(fileURLWithPath: manifest))
            } else {
                try fileManager.copyItem(atPath: BuildProducts.manifest(plugin.manifestFile), toPath: manifest)
            }
            if let group {
                var object = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: manifest))) as? [String: Any] ?? [:]
                object["isolation"] = ["group": group]
                try JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys]).write(to: URL(fileURLWithPath: manifest))
            }
            try fileManager.copyItem(atPath: plugin.builtLibrary,
                                     toPath: (folder as NSString).appendingPathComponent(plugin.library))
        }
    }

    /// The staged library of `plugin` (the source every raw-baseline copy is made from).
    func library(of plugin: ExamplePlugin) -> String {
        ((plugins as NSString).appendingPathComponent(plugin.id) as NSString).appendingPathComponent(plugin.library)
    }

    /// The staged plugin folder of `plugin`.
    func folder(of plugin: ExamplePlugin) -> String {
        (plugins as NSString).appendingPathComponent(plugin.id)
    }

    /// A host over the staged plugins, discovered, with plugin logging silenced.
    @MainActor
    /// `keepWorkerReady` off: every load starts its worker (W1 measures that start).
    func makeHost(isolation: IsolationMode = .inProcess, canary: Bool = false, confinesWorkers: Bool = true,
                  keepWorkerReady: Bool = true) throws -> BerthHost {
        let logger = Logger(label: "berth.bench") { _ in SwiftLogNoOpLogHandler() }
        // The canary is off unless asked for: the load figures measure the load itself.
        // A long-lived host, as `berth run` is: one worker kept started ahead of need.
        var settings = IsolationSettings(policy: .always(isolation), workerExecutable: BuildProducts.library("berth-worker"), canary: canary,
                                         keepWorkerReady: keepWorkerReady)
        settings.confinesWorkers = confinesWorkers
        let host = try BerthHost(configuration: .init(pluginFolders: [plugins], runtimeBase: runtimeBase, logger: logger, isolation: settings))
        let discovery = host.discover()
        guard discovery.rejected.isEmpty else {
            fatalError("staged plugins were rejected: \(discovery.rejected.map { "\($0.folder): \($0.problems)" })")
        }
        return host
    }

    func remove() {
        try? FileManager.default.removeItem(atPath: root)
    }
}
