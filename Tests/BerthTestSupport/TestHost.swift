@_spi(Engine) import BerthRuntime
import Foundation
import Logging

/// The isolation mode the runtime suites run in: `BERTH_TEST_ISOLATION=process` runs every
/// plugin whose manifest does not ask otherwise in a worker process (CI runs the suites in
/// both modes); otherwise plugins run in the host's process.
public enum TestIsolation {
    public static var settings: IsolationSettings {
        let mode: IsolationMode = ProcessInfo.processInfo.environment["BERTH_TEST_ISOLATION"] == "process" ? .process : .inProcess
        return settings(.manifest(default: mode))
    }

    /// Settings with `policy` and the built worker. The hang budget is one no healthy call
    /// on a loaded machine comes near (a worker's silence of 3 s, the product's default, is
    /// not a hang while the whole suite runs on two cores); a test of the watchdog gives a
    /// short one, or shortens it just before the call that hangs.
    public static func settings(_ policy: IsolationSettings.Policy, unresponsive: Duration = .seconds(300)) -> IsolationSettings {
        IsolationSettings(policy: policy, unresponsiveAfter: unresponsive,
                          workerExecutable: (BuildProducts.directory as NSString).appendingPathComponent("berth-worker"))
    }
}

extension IsolationSettings {
    /// For tests about the in-process implementation itself (retired images, dlclose):
    /// every plugin in the host's process, whatever the test matrix says.
    public static var inProcessOnly: IsolationSettings { TestIsolation.settings(.always(.inProcess)) }
}

extension PluginWorkspace {
    /// The worker group of the example plugins, as `scripts/demo` names it with `--group`.
    public static let exampleGroups: [String: Set<String>] = ["greeter-family": ["com.example.greeter", "com.example.profile"]]

    /// A host over this workspace's plugins folder, discovered, with its runtime folder
    /// inside the workspace and plugin logging silenced.
    /// The host consents to the example group (Greeter and Profile share greeter-family's
    /// worker), as `scripts/demo` does with `--group`.
    @MainActor
    /// `persistingState`: the host keeps persisted keys in a state folder inside the workspace.
    public func makeHost(recorder: LogRecorder? = nil, isolation: IsolationSettings = TestIsolation.settings,
                         signatures: SignaturePolicy = SignaturePolicy(), groups: [String: Set<String>] = PluginWorkspace.exampleGroups,
                         persistingState: Bool = false) throws -> BerthHost {
        let logger = recorder?.logger() ?? Logger(label: "berth.test") { _ in SwiftLogNoOpLogHandler() }
        var configuration = BerthHost.Configuration(pluginFolders: [plugins], runtimeBase: runtimeBase, logger: logger, isolation: isolation)
        if persistingState { configuration.stateDirectory = (root as NSString).appendingPathComponent("state") }
        configuration.signatures = signatures
        configuration.groups = groups
        let host = try BerthHost(configuration: configuration)
        host.discover()
        return host
    }

    /// Counter and the crasher staged and loaded, where the test matrix says, for the lane
    /// suites. Their hang budget is never reached: other suites of the test process may hold
    /// the main actor for minutes, and a call held at a gate must still be running when the
    /// test gets its turn (each test opens its gates at its end).
    @MainActor
    public func makeCounterAndCrasherHost(recorder: LogRecorder, persistingState: Bool = false) throws -> BerthHost {
        stage("counter.json")
        stageCrasher()
        var settings = TestIsolation.settings
        settings.unresponsiveAfter = .seconds(3_600)
        let host = try makeHost(recorder: recorder, isolation: settings, persistingState: persistingState)
        try host.load("com.example.counter")
        try host.load("org.berth.crasher")
        return host
    }

    /// Stages the crasher fixture (`HOW-WHEN` routes, see Tests/Fixtures/BerthCrasher).
    @discardableResult
    public func stageCrasher(isolation: String? = nil, id: String = "org.berth.crasher", entry: String = "berth_crasher_entry_v1") -> String {
        let folder = (plugins as NSString).appendingPathComponent(id)
        try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try? FileManager.default.copyItem(atPath: BuildProducts.library("libBerthCrasher.so"), toPath: (folder as NSString).appendingPathComponent("libBerthCrasher.so"))
        let hows = ["segv", "abort", "trap", "exit", "stack", "hang", "slow", "gate", "refuse"]
        let whens = ["create", "activate", "action", "render", "event", "task", "delegate", "context", "deactivate"]
        var manifest: [String: Any] = [
            "id": id, "name": "Crasher", "version": "1.0.0", "abi": "1.0", "library": "libBerthCrasher.so",
            "entry": entry, "runtime": "c", "persist": ["n"], "routes": ["ok", "loop-activate"] + hows.flatMap { how in whens.map { "\(how)-\($0)" } },
            "exports": ["crasher_add", "crasher_segv", "crasher_abort", "crasher_exit", "crasher_hang",
                        "crasher_queue_on_main", "crasher_main_queue_runs"].map { symbol in
                ["symbol": symbol, "returns": "int32", "params": symbol == "crasher_add" ? ["int32", "int32"] : [String]()] as [String: Any]
            },
        ]
        if let isolation { manifest["isolation"] = isolation }
        write(manifest: manifest, in: folder)
        return folder
    }
}

extension PluginWorkspace {
    /// Stages the probe fixture (Tests/Fixtures/BerthProbe) as `org.berth.probe` (or, with
    /// `other`, as `org.berth.probe-other`), after `edit` changes its manifest.
    @discardableResult
    public func stageProbe(other: Bool = false, edit: (inout [String: Any]) -> Void = { _ in }) -> String {
        let id = other ? "org.berth.probe-other" : "org.berth.probe"
        let folder = (plugins as NSString).appendingPathComponent(id)
        try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try? FileManager.default.copyItem(atPath: BuildProducts.library("libBerthProbe.so"), toPath: (folder as NSString).appendingPathComponent("libBerthProbe.so"))
        var manifest: [String: Any] = [
            "id": id, "name": "Probe", "version": "1.0.0", "abi": "1.0", "library": "libBerthProbe.so",
            "entry": other ? "berth_probe_other_entry_v1" : "berth_probe_entry_v1", "runtime": "c",
            "routes": ["probe", "other"], "persist": ["note"],
            "exports": [
                ["symbol": "probe_read", "params": ["string"], "returns": "int32"],
                ["symbol": "probe_write", "params": ["string"], "returns": "int32"],
                ["symbol": "probe_write_data", "params": ["string"], "returns": "int32"],
                ["symbol": "probe_connect", "params": ["int32"], "returns": "int32"],
                ["symbol": "probe_last_status", "params": [String](), "returns": "int32"],
                ["symbol": "probe_recalled_length", "params": [String](), "returns": "int32"],
                ["symbol": "probe_exec", "params": ["string"], "returns": "int32"],
                ["symbol": "probe_signal", "params": ["int32"], "returns": "int32"],
            ],
        ]
        edit(&manifest)
        write(manifest: manifest, in: folder)
        return folder
    }
}
