import Foundation
import Testing
@_spi(Engine) @testable import BerthRuntime
import BerthTestSupport

/// The Habits/Reminders shape of issue 41 in Swift, with no group and no C: the provider
/// fixture org.berth.reminders (`Service.provides` of a session-scoped ReminderClock and a
/// request-scoped Tally, Tests/Fixtures/BerthReminders) and the consumer org.berth.habits
/// (`context.service` + `context.awaiting`, Tests/Fixtures/BerthHabits), over the contract
/// package ReminderContract. The consumer shows each call's result, or its ServiceError's
/// line, as "result: …". Where a test names the placement, it holds in either mode; the
/// C suite (ContractCallTests) covers denial and unload.
@Suite("Swift contracts between plugins: the Habits/Reminders shape", .serialized) @MainActor
struct SwiftContractTests {
    /// Where the two plugins run.
    enum Placement: String, CaseIterable, CustomTestStringConvertible, Sendable {
        /// Each in a worker of its own.
        case workers
        /// Both in the host's process.
        case inProcess = "in process"
        /// The provider in a worker, the consumer in the host's process.
        case mixed

        var provider: String { self == .inProcess ? "in-process" : "process" }
        var consumer: String { self == .workers ? "process" : "in-process" }
        var testDescription: String { rawValue }
    }

    private let workspace = PluginWorkspace()
    private let recorder = LogRecorder()

    /// Stages the provider (`isolation` nil: the mode's default) and the consumers, loads
    /// them, and opens one Habits screen per consumer. `callTimeout`: a contract call's
    /// deadline, by default one no healthy call comes near while other suites hold the main
    /// actor for seconds (a held call ran past 10 s in a loaded CI); the timeout tests give 500 ms.
    private func host(provider: String?, consumer: String?, otherConsumer: Bool = false, loadProvider: Bool = true,
                      callTimeout: Duration = .seconds(300)) throws -> (BerthHost, [Router]) {
        workspace.stageReminders(isolation: provider)
        var consumers = ["org.berth.habits"]
        workspace.stageHabits(isolation: consumer)
        if otherConsumer {
            consumers.append("org.berth.habits-other")
            workspace.stageHabits(other: true, isolation: consumer)
        }
        let mode: IsolationMode = ProcessInfo.processInfo.environment["BERTH_TEST_ISOLATION"] == "process" ? .process : .inProcess
        // A long hang budget (LaneTests use one too): a call waits for the main actor, which this test
        // process shares with every other suite (one that holds it, in a full parallel run,
        // must not make a worker look hung here); a hang is the provider's, caught by the
        // contract call's own timeout.
        var settings = TestIsolation.settings(.manifest(default: mode), unresponsive: .seconds(300))
        settings.serviceCallTimeout = callTimeout
        let host = try workspace.makeHost(recorder: recorder, isolation: settings)
        if loadProvider { try host.load("org.berth.reminders") }
        var screens: [Router] = []
        for id in consumers {
            try host.load(id)
            screens.append(try host.push(Route(plugin: id, name: "habits")))
        }
        return (host, screens)
    }

    /// Sends `action` to a Habits screen and returns what it shows after it.
    @discardableResult
    private func call(_ host: BerthHost, _ screen: Router, _ action: String, _ word: String = "") async throws -> String {
        try await host.send(screen: screen.id, action: action, payload: Array(word.utf8))
        return try shown(host, screen)
    }

    /// The screen's "result: …" line, without the prefix.
    private func shown(_ host: BerthHost, _ screen: Router) throws -> String {
        let texts = try host.render(screen: screen.id)?.allNodes.compactMap { $0.fields["text"] } ?? []
        let line = try #require(texts.first { $0.hasPrefix("result: ") }, "\(texts)")
        return String(line.dropFirst("result: ".count))
    }

    /// The numbers in log lines containing `prefix` ("made clock #"), in order.
    private func numbers(_ prefix: String) -> [Int] {
        recorder.all.compactMap { line in
            guard let range = line.range(of: prefix) else { return nil }
            return Int(line[range.upperBound...].prefix { $0.isNumber })
        }
    }

    @Test("a session-scoped Swift contract: one instance per session, released at its end, a fresh one after; values and the provider's errors cross",
          arguments: Placement.allCases)
    func sessionScope(placement: Placement) async throws {
        let (host, screens) = try host(provider: placement.provider, consumer: placement.consumer)
        let habits = screens[0]
        let outside = try await call(host, habits, "instance")
        #expect(outside.hasPrefix("failed: ") && outside.contains("org.berth.reminders.ReminderClock"), "no session yet: \(outside)")
        try await call(host, habits, "begin", "alice")
        #expect(try await call(host, habits, "instance") == "#1 call 1")
        #expect(try await call(host, habits, "instance") == "#1 call 2", "the same instance within the session")
        #expect(try await call(host, habits, "next", "1000") == "1060", "a Date argument and a Date result, through JSON")
        let failed = try await call(host, habits, "fail", "bad day")
        #expect(failed.hasPrefix("failed: ") && failed.contains("the clock refuses: bad day"), "\(failed)")
        #expect(!failed.contains("\n"))
        #expect(numbers("released clock #").isEmpty)
        try await call(host, habits, "end")
        #expect(await eventuallyAsync { numbers("released clock #") == [1] }, "the session's end releases its instance in the provider: \(recorder.all)")
        try await call(host, habits, "begin", "bob")
        #expect(try await call(host, habits, "instance") == "#2 call 1", "a fresh instance for the next session")
        #expect(numbers("made clock #") == [1, 2])
        let contract = host.scopes.contracts.first { $0.key == "org.berth.reminders.ReminderClock" }
        #expect(contract?.callers == ["org.berth.habits"])
    }

    @Test("with no provider loaded a call fails as not found, in one line naming the contract", arguments: [Placement.workers, .inProcess])
    func noProvider(placement: Placement) async throws {
        let (host, screens) = try host(provider: placement.provider, consumer: placement.consumer, loadProvider: false)
        try await call(host, screens[0], "begin", "alice")
        let answer = try await call(host, screens[0], "instance")
        #expect(answer == "not found: service_call org.berth.reminders.ReminderClock: no plugin or host registered this service")
        #expect(host.openRouters.contains { $0.id == screens[0].id })
    }

    @Test("a Swift provider that crashes mid-call fails it as crashed, naming the provider; the consumer's screen stays open and its next call starts the provider again",
          arguments: [Placement.workers, .mixed])
    func providerCrash(placement: Placement) async throws {
        let (host, screens) = try host(provider: placement.provider, consumer: placement.consumer)
        let habits = screens[0]
        try await call(host, habits, "begin", "alice")
        #expect(try await call(host, habits, "instance") == "#1 call 1")
        let crashed = try await call(host, habits, "crash")
        #expect(crashed.hasPrefix("crashed: ") && crashed.contains("org.berth.reminders"), "\(crashed)")
        #expect(crashed.contains("crashed (SIGILL: BerthReminders/Reminders.swift:29: Fatal error: reminders crashes on purpose; stack: SystemClock.crash() at Reminders.swift:29)"), "its signal and fatal line, as the crash event says: \(crashed)")
        #expect(!crashed.contains("\n"))
        #expect(host.openRouters.contains { $0.id == habits.id }, "the consumer's screen stays open")
        #expect(host.plugins["org.berth.habits"]?.state == .loaded)
        let crashEvents = host.events.filter { $0.kind == .crashed }
        #expect(!crashEvents.isEmpty && crashEvents.allSatisfy { $0.subject == .plugin("org.berth.reminders") },
                "only the provider is blamed: \(crashEvents.map(\.description))")
        // The consumer goes on: once the crash is recorded, its next call starts the provider
        // again (as an `open` would) and reaches a fresh instance in the new worker.
        #expect(await eventuallyAsync { host.plugins["org.berth.reminders"]?.state == .crashed })
        let after = try await call(host, habits, "instance")
        #expect(after == "#1 call 1", "\(after)")
        #expect(host.plugins["org.berth.reminders"]?.state == .loaded)
        #expect(host.openRouters.contains { $0.id == habits.id })
    }

    @Test("a Swift provider that does not answer in time fails the call as timed out; the consumer's screen stays open",
          arguments: [Placement.workers, .mixed])
    func providerHang(placement: Placement) async throws {
        let (host, screens) = try host(provider: placement.provider, consumer: placement.consumer, callTimeout: .milliseconds(500))
        let habits = screens[0]
        try await call(host, habits, "begin", "alice")
        let slow = try await call(host, habits, "slow", "30000")
        #expect(slow.hasPrefix("timed out: ") && slow.contains("org.berth.reminders"), "\(slow)")
        #expect(host.openRouters.contains { $0.id == habits.id })
    }

    @Test("after the Swift provider reloads, the next call reaches the new generation with a fresh instance",
          arguments: Placement.allCases)
    func providerReload(placement: Placement) async throws {
        let (host, screens) = try host(provider: placement.provider, consumer: placement.consumer)
        let habits = screens[0]
        try await call(host, habits, "begin", "alice")
        let first = try await call(host, habits, "generation")
        #expect(try await call(host, habits, "instance") == "#1 call 1")
        _ = try host.reload("org.berth.reminders")
        #expect(await eventuallyAsync { numbers("released clock #") == [1] }, "the old generation's instance is released at the reload")
        let second = try await call(host, habits, "generation")
        #expect(!second.isEmpty && !second.contains(":") && second != first, "\(first) then \(second)")
        #expect(try await call(host, habits, "instance") == "#1 call 1", "the new generation's own instance")
        #expect(host.openRouters.contains { $0.id == habits.id })
    }

    @Test("a call in flight finishes on the old generation: a reload meanwhile is refused as busy; once the call returned it reloads and the next call reaches the new generation",
          arguments: Placement.allCases)
    func reloadDuringCall(placement: Placement) async throws {
        let (host, screens) = try host(provider: placement.provider, consumer: placement.consumer)
        let habits = screens[0]
        try await call(host, habits, "begin", "alice")
        let first = try await call(host, habits, "generation")
        // The call stays in flight until the test makes this file (in the provider's own
        // folder, which its worker may read): no deadline decides whether the reload meets it.
        let release = (workspace.plugins as NSString).appendingPathComponent("org.berth.reminders/release")
        defer { FileManager.default.createFile(atPath: release, contents: Data()) }
        async let held = call(host, habits, "hold", release)
        #expect(await eventuallyAsync { !recorder.matching("holds").isEmpty }, "the provider runs the call")
        #expect { try host.reload("org.berth.reminders") } throws: { error in
            "\(error)".contains("org.berth.reminders: is busy: contract call 'org.berth.reminders.ReminderClock'")
                && "\(error)".contains("reload it once it returns")
        }
        #expect(FileManager.default.createFile(atPath: release, contents: Data()))
        #expect(try await held == "released", "answered by the old generation")
        #expect(try await call(host, habits, "generation") == first)
        _ = try host.reload("org.berth.reminders")
        let second = try await call(host, habits, "generation")
        #expect(second != first && !second.contains(":"), "\(first) then \(second)")
    }

    @Test("a Swift consumer calls a contract a C plugin provides (contract.c's org.berth.Clock): the same bytes on the wire",
          arguments: [Placement.workers, .inProcess])
    func swiftConsumerOfACProvider(placement: Placement) async throws {
        workspace.stageFixture(folder: "clock", entry: "fixture_entry_clock", id: "org.berth.clock") { manifest in
            manifest["routes"] = ["clock"]
            manifest["abi"] = "1.2"
            manifest["capabilities"] = ["services.provide"]
            manifest["isolation"] = placement.provider
        }
        let (host, screens) = try host(provider: placement.provider, consumer: placement.consumer)
        try host.load("org.berth.clock")
        let habits = screens[0]
        try await call(host, habits, "begin", "alice")
        #expect(try await call(host, habits, "c-next") == "C #1 calls 1")
        #expect(try await call(host, habits, "c-next") == "C #1 calls 2", "the session's one instance, in the C provider")
        let contract = host.scopes.contracts.first { $0.key == "org.berth.Clock" }
        #expect(contract?.provider == "org.berth.clock#1")
    }

    @Test("two consumers at once, first use: the session's instance is made once (single flight) and both reach it",
          arguments: [Placement.workers, .inProcess])
    func singleFlight(placement: Placement) async throws {
        let (host, screens) = try host(provider: placement.provider, consumer: placement.consumer, otherConsumer: true)
        host.beginSession("shared")
        async let first = call(host, screens[0], "instance")
        async let second = call(host, screens[1], "instance")
        let answers = try await [first, second]
        #expect(Set(answers) == ["#1 call 1", "#1 call 2"], "one instance for both: \(answers)")
        #expect(numbers("made clock #") == [1])
        let contract = host.scopes.contracts.first { $0.key == "org.berth.reminders.ReminderClock" }
        #expect(Set(contract?.callers ?? []) == ["org.berth.habits", "org.berth.habits-other"])
    }

    @Test("two consumers at once: each action has its own request-scoped instance, the same for both its calls, released when it ends",
          arguments: [Placement.workers, .inProcess])
    func requestScopeUnderConcurrency(placement: Placement) async throws {
        let (host, screens) = try host(provider: placement.provider, consumer: placement.consumer, otherConsumer: true)
        var tallies: [String] = []
        for _ in 0..<4 {
            async let one = call(host, screens[0], "tally")
            async let other = call(host, screens[1], "tally")
            tallies += try await [one, other]
        }
        var instances: Set<Int> = []
        for tally in tallies {
            let parts = tally.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
            let number = parts.first.flatMap { Int($0.dropFirst().prefix { $0.isNumber }) }
            #expect(parts.count == 2 && parts[0].hasSuffix("total 1") && parts[1] == "#\(number ?? -1) total 2",
                    "one instance within an action, fresh for each: \(tally)")
            if let number { instances.insert(number) }
        }
        #expect(instances.count == 8, "\(tallies)")
        #expect(await eventuallyAsync(timeout: .seconds(30)) { numbers("released tally #").count == instances.count }, "each released when its action ended")
        #expect(Set(numbers("released tally #")) == instances)
    }
}
