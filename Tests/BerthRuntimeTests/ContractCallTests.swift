import Foundation
import Testing
@_spi(Engine) @testable import BerthRuntime
import BerthTestSupport

/// Contract calls (ABI 1.2 `service_call`) between two C plugins, with the fixtures of
/// `contract.c`: the provider org.berth.clock (a session-scoped contract "org.berth.Clock")
/// and the consumer org.berth.alarm. In process mode each runs in its own worker; in the
/// default mode both run in the host's process, except where a test puts the provider in a
/// worker to crash or hang it.
@Suite("Contract calls between plugins, in both modes", .serialized) @MainActor
struct ContractCallTests {
    private let workspace = PluginWorkspace()
    private let recorder = LogRecorder()

    private func host(provider isolation: String? = nil, consumerCapabilities: [String] = ["services.consume", "session"],
                      callTimeout: Duration = .seconds(300), crashLimit: Int? = nil) throws -> (BerthHost, alarm: Router) {
        workspace.stageFixture(folder: "clock", entry: "fixture_entry_clock", id: "org.berth.clock") { manifest in
            manifest["routes"] = ["clock"]
            manifest["capabilities"] = ["services.provide"]
            if let isolation { manifest["isolation"] = isolation }
        }
        workspace.stageFixture(folder: "alarm", entry: "fixture_entry_alarm", id: "org.berth.alarm") { manifest in
            manifest["routes"] = ["alarm"]
            manifest["capabilities"] = consumerCapabilities
        }
        let mode: IsolationMode = ProcessInfo.processInfo.environment["BERTH_TEST_ISOLATION"] == "process" ? .process : .inProcess
        // A long hang budget (LaneTests use one too): a call waits for the main actor, which this test
        // process shares with every other suite (one that holds it, in a full parallel run,
        // must not make a worker look hung here); a hang is the provider's, caught by the
        // contract call's own timeout.
        var settings = TestIsolation.settings(.manifest(default: mode), unresponsive: .seconds(300))
        settings.serviceCallTimeout = callTimeout
        if let crashLimit { settings.crashLimit = crashLimit }
        let host = try workspace.makeHost(recorder: recorder, isolation: settings)
        try host.load("org.berth.clock")
        try host.load("org.berth.alarm")
        return (host, try host.push("alarm"))
    }

    private func send(_ host: BerthHost, _ screen: Router, _ action: String, _ word: String) async throws {
        try await host.send(screen: screen.id, action: action, payload: Array(word.utf8))
    }

    /// The consumer's log lines about its calls, in order.
    private var answers: [String] {
        recorder.all.compactMap { line in
            ["reply: ", "call failed ("].lazy.compactMap { line.range(of: $0) }.first.map { String(line[$0.lowerBound...]) }
        }
    }

    private func count(_ prefix: String) -> Int { recorder.all.filter { $0.contains(prefix) }.count }

    @Test("a consumer calls another plugin's session contract: one instance per session, released at its end, a fresh one after")
    func sessionScope() async throws {
        let (host, alarm) = try host()
        try await send(host, alarm, "begin", "s1")
        try await send(host, alarm, "call", "next")
        try await send(host, alarm, "call", "next")
        #expect(answers == [#"reply: {"instance":1,"calls":1}"#, #"reply: {"instance":1,"calls":2}"#])
        #expect(count("released clock #1") == 0)
        try await send(host, alarm, "end", "")
        #expect(count("released clock #1") == 1, "the session's end releases its instance in the provider")
        try await send(host, alarm, "begin", "s2")
        try await send(host, alarm, "call", "next")
        #expect(answers.last == #"reply: {"instance":2,"calls":1}"#)
        let contract = host.scopes.contracts.first { $0.key == "org.berth.Clock" }
        #expect(contract?.provider == "org.berth.clock#1")
        #expect(contract?.callers == ["org.berth.alarm"])
    }

    @Test("the provider's own error reaches the consumer with its status and message; a call with no session is refused")
    func providerError() async throws {
        let (host, alarm) = try host()
        try await send(host, alarm, "call", "next")
        #expect(answers.last?.hasPrefix("call failed (4): service_call org.berth.Clock") == true, "\(answers)")
        #expect(await eventuallyAsync { host.events.contains { $0.message.hasPrefix("a contract call failed: service_call org.berth.Clock: ") } }, "the key once, not twice")
        try await send(host, alarm, "begin", "s")
        try await send(host, alarm, "call", "fail")
        #expect(answers.last == "call failed (5): the clock refuses")
        #expect(host.events.contains { $0.message == "a contract call failed: org.berth.Clock: the clock refuses" })
    }

    @Test("a consumer without services.consume is denied, naming the capability")
    func denied() async throws {
        let (host, alarm) = try host(consumerCapabilities: ["session"])
        try await send(host, alarm, "begin", "s")
        try await send(host, alarm, "call", "next")
        #expect(answers.last?.hasPrefix("call failed (8)") == true, "\(answers)")
        #expect(answers.last?.contains("services.consume") == true)
        #expect(count("made clock #") == 0)
    }

    @Test("after the provider reloads (its new generation made on the main actor, or off it with its contract held until it is in use), the next call reaches its new generation; after it unloads, calls say unavailable",
          arguments: [false, true])
    func reloadAndUnload(offMain: Bool) async throws {
        let (host, alarm) = try host()
        try await send(host, alarm, "begin", "s")
        try await send(host, alarm, "call", "next")
        if offMain { _ = try await host.reloadGenerationOffMain("org.berth.clock") } else { _ = try host.reload("org.berth.clock") }
        #expect(count("released clock #1") == 1, "the old generation's instance is released at the reload")
        try await send(host, alarm, "call", "next")
        #expect(answers.last == #"reply: {"instance":1,"calls":1}"#, "a fresh instance of the new generation: \(answers)")
        #expect(count("made clock #1") == 2)
        #expect(host.scopes.contracts.first?.provider == "org.berth.clock#2")
        try host.unload("org.berth.clock")
        try await send(host, alarm, "call", "next")
        #expect(answers.last?.hasPrefix("call failed (9)") == true, "\(answers)")
        #expect(host.openRouters.contains { $0.id == alarm.id }, "the consumer's screen stays open")
    }

    @Test("a provider that crashes mid-call fails it with CRASHED naming the provider; the consumer and its screen go on")
    func providerCrash() async throws {
        let (host, alarm) = try host(provider: "process")
        let clock = try host.push("clock")
        try await send(host, alarm, "begin", "s")
        try await send(host, alarm, "call", "next")
        try await send(host, alarm, "call", "crash")
        #expect(answers.last?.hasPrefix("call failed (10): org.berth.Clock: its provider org.berth.clock#1 crashed (SIGABRT)") == true, "its signal, as the crash event says: \(answers)")
        let open = host.openRouters.map(\.id)
        #expect(open.contains(alarm.id), "the consumer's screen stays open")
        #expect(!open.contains(clock.id), "the provider's screen is closed with its worker")
        // Once the crash is recorded, the next call starts the provider again (as an `open`
        // would): a fresh instance in a new worker.
        #expect(await eventuallyAsync { host.plugins["org.berth.clock"]?.state == .crashed })
        try await send(host, alarm, "call", "next")
        #expect(answers.last == #"reply: {"instance":1,"calls":1}"#, "\(answers)")
        #expect(host.plugins["org.berth.clock"]?.state == .loaded)
    }

    @Test("a provider past its crash budget is not started again by a call: the call fails in one line naming it and the budget")
    func providerPastCrashBudget() async throws {
        let (host, alarm) = try host(provider: "process", crashLimit: 1)
        try await send(host, alarm, "begin", "s")
        try await send(host, alarm, "call", "crash")
        #expect(await eventuallyAsync { if case .failed = host.plugins["org.berth.clock"]?.state { true } else { false } })
        try await send(host, alarm, "call", "next")
        #expect(answers.last?.hasPrefix("call failed (9): service_call org.berth.Clock: its provider org.berth.clock crashed and does not start again: ") == true, "\(answers)")
        #expect(answers.last?.contains("crashed 1 times") == true, "\(answers)")
        #expect(host.openRouters.contains { $0.id == alarm.id })
    }

    @Test("a provider that does not answer in time fails the call with TIMED_OUT naming it")
    func providerHang() async throws {
        let (host, alarm) = try host(provider: "process", callTimeout: .milliseconds(500))
        try await send(host, alarm, "begin", "s")
        try await send(host, alarm, "call", "hang")
        #expect(answers.last?.hasPrefix("call failed (11): org.berth.Clock: its provider org.berth.clock#1 did not answer in time") == true, "\(answers)")
        #expect(host.openRouters.contains { $0.id == alarm.id })
    }
}
