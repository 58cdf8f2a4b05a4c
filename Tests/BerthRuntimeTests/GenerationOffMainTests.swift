import Foundation
import Testing
@_spi(Engine) @testable import BerthRuntime
import BerthTestSupport

/// Loads and reloads whose new generation is made off the main actor
/// (`BerthHost.loadOffMain`, `BerthHost.reloadOffMain`): while a plugin's entry waits, the
/// host's other screens and its state answer. The crasher's `berth_crasher_entry_gate` waits
/// at the gate "load" in its runtime folder until the test lets it go. Both modes, as the
/// test matrix says (in process, the trial worker's entry waits at the same gate first).
@Suite("New generations made off the main actor", .serialized) @MainActor
struct GenerationOffMainTests {
    let workspace = PluginWorkspace()
    let recorder = LogRecorder()
    let host: BerthHost

    init() throws {
        host = try workspace.makeCounterAndCrasherHost(recorder: recorder)
    }

    /// Returns once a gated entry of `id` is inside its gate (its log line, or its marker where
    /// it could write one). Inside the test's main actor: a host that held it while the entry
    /// waits gets here only once the watchdog has opened the gate.
    private func waitUntilEntered(_ id: String) async {
        let marker = host.runtimeDirectory.folder(of: id) + "/entered-load"
        let entered = await eventuallyAsync {
            FileManager.default.fileExists(atPath: marker) || recorder.all.contains { $0.contains("entered load") }
        }
        #expect(entered, "the entry of \(id) reached its gate")
    }

    /// Stages the crasher with its gated entry and starts a reload onto it; returns once the
    /// new generation's entry waits at the gate.
    private func startGatedReload() async -> (GateWatchdog, Task<PluginGeneration, any Error>) {
        workspace.stageCrasher(entry: "berth_crasher_entry_gate")
        let gate = GateWatchdog(folder: host.runtimeDirectory.folder(of: "org.berth.crasher"))
        let host = host
        let reload = Task { @MainActor in try await host.reloadGenerationOffMain("org.berth.crasher") }
        await waitUntilEntered("org.berth.crasher")
        return (gate, reload)
    }

    /// Another plugin's screen takes an action and the host's state answers, while `id` waits.
    private func hostAnswers(while id: String, counter: Router) async throws {
        try await host.send(screen: counter.id, action: "increment", payload: [])
        #expect(host.pluginSnapshot(id) != nil)
        #expect(host.screen(counter.id)?.busy == false)
    }

    /// A second load or reload while the plugin's next generation is made is refused at once.
    private func expectRefusedWhileMade(_ attempt: () async throws(LoaderError) -> Void) async {
        do {
            try await attempt()
            Issue.record("a second load or reload ran while the first made its generation")
        } catch {
            #expect(error.message.contains("is being loaded or reloaded already"), "\(error.message)")
        }
    }

    @Test("a reload held in the new generation's entry leaves the host free and the old screen open; once let go it swaps the generations")
    func reloadHeldAtEntry() async throws {
        let counter = try host.push("com.example.counter/counter", argument: Array("3600000".utf8))
        let screen = try host.push("org.berth.crasher/ok")
        let (gate, reload) = await startGatedReload()
        defer { gate.open() }
        try await hostAnswers(while: "org.berth.crasher", counter: counter)
        #expect(screen.module?.generation.number == 1 && screen.module?.isActive == true, "the old screen runs until the new generation is ready")
        #expect(host.pluginSnapshot("org.berth.crasher")?.generation == 1)
        await expectRefusedWhileMade { () async throws(LoaderError) in try await host.reloadOffMain("org.berth.crasher") }
        #expect(!gate.openedByWatchdog, "the host was held until the watchdog opened the gate")

        gate.open()
        let fresh = try await reload.value
        #expect(fresh.number == 2)
        #expect(screen.module?.generation === fresh && screen.module?.isActive == true)
        #expect(host.pluginSnapshot("org.berth.crasher")?.generation == 2)
    }

    @Test("a load held in the plugin's entry leaves the host free; once let go the registry records the generation")
    func loadHeldAtEntry() async throws {
        let counter = try host.push("com.example.counter/counter", argument: Array("3600000".utf8))
        try host.unload("org.berth.crasher")
        let folder = workspace.stageCrasher(entry: "berth_crasher_entry_gate")
        let gate = GateWatchdog(folder: host.runtimeDirectory.folder(of: "org.berth.crasher"))
        defer { gate.open() }
        let host = host
        let load = Task { @MainActor in try await host.loadFolderOffMain(folder) }

        await waitUntilEntered("org.berth.crasher")
        try await hostAnswers(while: "org.berth.crasher", counter: counter)
        #expect(host.generation(of: "org.berth.crasher") == nil, "not recorded before it is ready")
        #expect(RunningPluginCall.onLanes.contains { $0.description == "org.berth.crasher load of generation 2" }, "status names the load")
        await expectRefusedWhileMade { () async throws(LoaderError) in try await host.loadOffMain("org.berth.crasher") }
        #expect(!gate.openedByWatchdog, "the host was held until the watchdog opened the gate")

        gate.open()
        let generation = try await load.value
        #expect(generation.number == 2 && host.generation(of: "org.berth.crasher") === generation)
        #expect(host.events.contains { $0.kind == .loaded && $0.subject == .plugin("org.berth.crasher") && $0.message.contains("generation 2 loaded") })
        let screen = try host.push("org.berth.crasher/ok")
        #expect(screen.module?.isActive == true)
    }

    @Test("a reload whose new generation fails to load leaves the old generation and its screens running, never taken out")
    func failedMakeTouchesNothing() async throws {
        let screen = try host.push("org.berth.crasher/ok")
        let mark = host.events.count
        workspace.stageCrasher(entry: "berth_crasher_entry_segv")
        do {
            try await host.reloadOffMain("org.berth.crasher")
            Issue.record("a reload onto an entry that crashes succeeded")
        } catch {
            #expect(error.rollback?.generation == 1 && error.rollback?.step == .load, "\(error.message)")
            #expect([.canaryFailed, .workerFailed].contains(error.code), "\(error.code): \(error.message)")
            #expect(!error.message.contains("\n"))
        }
        #expect(host.generation(of: "org.berth.crasher")?.number == 1)
        #expect(screen.module?.generation.number == 1 && screen.module?.isActive == true)
        let touched = host.events[mark...].filter { $0.subject == .screen(screen.id) && [.deactivated, .released, .activated].contains($0.kind) }
        #expect(touched.isEmpty, "the screen was never taken out: \(touched)")

        workspace.stageCrasher()
        let fresh = try await host.reloadGenerationOffMain("org.berth.crasher")
        #expect(screen.module?.generation === fresh && screen.module?.isActive == true)
    }

    @Test("an unload while the new generation is made ends that generation; the reload says what changed")
    func unloadedWhileMade() async throws {
        let (gate, reload) = await startGatedReload()
        defer { gate.open() }
        try host.unload("org.berth.crasher")
        gate.open()
        do {
            _ = try await reload.value
            Issue.record("a reload of an unloaded plugin succeeded")
        } catch let error as LoaderError {
            #expect(error.message.contains("not loaded"), "\(error.message)")
        }
        #expect(host.generation(of: "org.berth.crasher") == nil)
    }
}

/// The gate "load" (or `when`) in a folder: the test opens it; a watchdog thread opens it after
/// two minutes when the test cannot (its main actor held by a host that waits for the
/// plugin), so such a host fails the test instead of hanging it.
final class GateWatchdog: Sendable {
    private let release: String
    private let opened = Locked<Bool?>(nil)

    init(folder: String, when: String = "load") {
        release = folder + "/leave-\(when)"
        let (release, opened) = (release, opened)
        Thread.detachNewThread {
            let deadline = ContinuousClock.now + .seconds(120)
            while ContinuousClock.now < deadline, opened.withLock({ $0 == nil }) { usleep(20_000) }
            if opened.withLock({ state in
                defer { state = state ?? true }
                return state == nil
            }) {
                FileManager.default.createFile(atPath: release, contents: nil)
            }
        }
    }

    /// True when the watchdog, not the test, opened the gate.
    var openedByWatchdog: Bool { opened.withLock { $0 == true } }

    /// Opens the gate (once).
    func open() {
        opened.withLock { $0 = $0 ?? false }
        FileManager.default.createFile(atPath: release, contents: nil)
    }
}
