import Foundation
import Testing
@_spi(Engine) @testable import BerthRuntime
import BerthTestSupport

/// The manifest's `contracts` (issue 41, facts written once): how it is read, and the
/// warning discovery gives for a contract a plugin consumes and no plugin provides, with
/// the C fixtures of `contract.c` (provider org.berth.clock of "org.berth.Clock", consumer
/// org.berth.alarm) under hand-written manifests.
@Suite("Manifest contracts: provides and consumes")
struct ManifestContractsTests {
    private static var base: [String: Any] { [
        "id": "com.example.sample", "name": "Sample", "version": "1.2.3", "abi": "1.2",
        "library": "libSample.so", "entry": "sample_entry_v1", "runtime": "c",
    ] }

    private func decode(_ contracts: Any) -> (PluginManifest?, [PluginProblem]) {
        var fields = Self.base
        fields["contracts"] = contracts
        let data = try! JSONSerialization.data(withJSONObject: fields)
        return PluginManifest.decode(data, path: "x/plugin.json")
    }

    @Test("provides and consumes decode in order; either may be left out; absent, both are empty")
    func decodes() throws {
        let (manifest, problems) = decode(["provides": ["org.berth.Clock", "com.nu.reminders.ReminderClock"], "consumes": ["org.acme.Weather-2"]])
        #expect(problems.isEmpty, "\(problems)")
        #expect(manifest?.contracts == PluginContracts(provides: ["org.berth.Clock", "com.nu.reminders.ReminderClock"], consumes: ["org.acme.Weather-2"]))
        #expect(decode(["consumes": ["org.berth.Clock"]]).0?.contracts == PluginContracts(consumes: ["org.berth.Clock"]))
        let plain = PluginManifest.decode(try JSONSerialization.data(withJSONObject: Self.base), path: "x/plugin.json")
        #expect(plain.manifest?.contracts == PluginContracts())
    }

    @Test("each wrong type or name is one error naming the file and the field", arguments: [
        (#"["org.berth.Clock"]"#, #"x/plugin.json: contracts: must be an object such as {"provides": ["org.example.Clock"], "consumes": []}"#),
        (#"{"provides": "org.berth.Clock"}"#, "x/plugin.json: contracts.provides: must be an array of strings"),
        (#"{"consumes": [7]}"#, "x/plugin.json: contracts.consumes[0]: '7' is not a contract name"),
        (#"{"consumes": ["has space"]}"#, "x/plugin.json: contracts.consumes[0]: 'has space' is not a contract name"),
        (#"{"provides": ["org.berth.Clock", "org.berth.Clock"]}"#, "x/plugin.json: contracts.provides[1]: 'org.berth.Clock' is listed twice"),
        (#"{"provides": [""# + String(repeating: "a", count: 256) + #""]}"#, "x/plugin.json: contracts.provides[0]: 'aaaa"),
    ])
    func wrongTypes(_ contracts: String, _ line: String) throws {
        let (manifest, problems) = decode(try JSONSerialization.jsonObject(with: Data(contracts.utf8)))
        #expect(manifest == nil)
        #expect(problems.count == 1, "\(problems)")
        #expect(problems.first?.description.hasPrefix(line) == true, "\(problems)")
        #expect(problems.first?.description.contains("\n") == false)
    }

    @Test("an unknown field inside contracts is a warning, and the manifest still decodes")
    func unknownField() {
        let (manifest, problems) = decode(["provides": ["org.berth.Clock"], "requires": ["x"]])
        #expect(manifest?.contracts.provides == ["org.berth.Clock"])
        #expect(problems.map(\.description) == ["x/plugin.json: contracts.requires: warning: unknown field (expected \"provides\" or \"consumes\")"])
    }
}

/// Discovery's warning, in the mode BERTH_TEST_ISOLATION names (each plugin in its own
/// worker under `process`, in the host's process otherwise).
@Suite("Discovery warns of a consumed contract no plugin provides, in both modes") @MainActor
struct ContractDiscoveryTests {
    private let workspace = PluginWorkspace()
    private let recorder = LogRecorder()

    private func makeHost() throws -> BerthHost {
        let mode: IsolationMode = ProcessInfo.processInfo.environment["BERTH_TEST_ISOLATION"] == "process" ? .process : .inProcess
        // A long hang budget, as LaneTests have (a call waits for the main actor every suite shares).
        return try workspace.makeHost(recorder: recorder, isolation: TestIsolation.settings(.manifest(default: mode), unresponsive: .seconds(300)))
    }

    private func warnings(_ host: BerthHost) -> [String] {
        host.events.filter { $0.kind == .warning }.map(\.description)
    }

    @Test("a contract no plugin provides is one warning event naming the consumer, the contract and the folder; the provided one is not; a second discovery repeats nothing")
    func warnsOnce() throws {
        workspace.stageContractFixtures(provider: true, consumes: ["org.berth.Clock", "org.acme.Weather"])
        let host = try makeHost()
        let line = "org.berth.alarm: consumes org.acme.Weather, which no plugin in \(workspace.plugins)/ provides"
        #expect(warnings(host) == [line])
        #expect(host.discover().unprovidedContracts.map(\.description) == [line.replacingOccurrences(of: "alarm: ", with: "alarm ")])
        #expect(warnings(host) == [line], "a later discovery does not repeat the warning")
    }

    @Test("the contracts a manifest declares are the ones its code calls: with the provider present no warning, and the call answers")
    func declaredContractAnswers() async throws {
        workspace.stageContractFixtures(provider: true, consumes: ["org.berth.Clock"])
        let host = try makeHost()
        #expect(warnings(host).isEmpty, "\(warnings(host))")
        try host.load("org.berth.clock")
        try host.load("org.berth.alarm")
        let alarm = try host.push("alarm")
        try await host.send(screen: alarm.id, action: "begin", payload: Array("s".utf8))
        try await host.send(screen: alarm.id, action: "call", payload: Array("next".utf8))
        #expect(recorder.all.contains { $0.contains(#"reply: {"instance":1,"calls":1}"#) }, "\(recorder.all)")
    }

    @Test("without its provider the consumer is warned of at discovery, still loads, and its call fails naming the contract")
    func missingProvider() async throws {
        workspace.stageContractFixtures(provider: false, consumes: ["org.berth.Clock"])
        let host = try makeHost()
        #expect(warnings(host) == ["org.berth.alarm: consumes org.berth.Clock, which no plugin in \(workspace.plugins)/ provides"])
        try host.load("org.berth.alarm")
        let alarm = try host.push("alarm")
        try await host.send(screen: alarm.id, action: "begin", payload: Array("s".utf8))
        try await host.send(screen: alarm.id, action: "call", payload: Array("next".utf8))
        #expect(recorder.all.contains { $0.contains("call failed (") && $0.contains("org.berth.Clock") }, "\(recorder.all)")
    }
}
