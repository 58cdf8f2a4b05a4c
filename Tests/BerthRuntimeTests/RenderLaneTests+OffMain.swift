import Foundation
import Testing
@_spi(Engine) @testable import BerthRuntime
import BerthTestSupport

/// Whether the test matrix runs the plugins in workers (`BERTH_TEST_ISOLATION=process`): a
/// plugin can crash there without taking the test process down.
private let renderLaneTestsRunInWorkers = ProcessInfo.processInfo.environment["BERTH_TEST_ISOLATION"] == "process"

/// A reload off the main actor while a task's post runs on the plugin's lane: it waits for
/// the post without blocking the host, then swaps the generation (Docs/lanes.md).
extension RenderLaneTests {
    @Test("reloads: a reload off the main actor during a task's post waits for the post, not taking the screen out under it; other screens take actions meanwhile; then the plugin's screens run on the new generation")
    func reloadOffMainDuringPost() async throws {
        // No tick lands in the test: each would end an operation that renders the visible screen.
        let counter = try host.push("com.example.counter/counter", argument: Array("3600000".utf8))
        let ok = try host.push("org.berth.crasher/ok")
        defer { openGate("action") }
        let screen = try await openScreenWithWaitingPost()
        let eventsBefore = recorder.matching("event ").count
        let connection = try #require(screen.module?.generation.connection)
        let host = host
        let reload = Task { @MainActor in try await host.reloadGenerationOffMain("org.berth.crasher") }
        let waiting = await eventuallyAsync { connection.peopleWaiting == 1 }
        try #require(waiting, "the reload waits for the post")

        try await host.send(screen: counter.id, action: "increment", payload: [])
        try await host.send(screen: counter.id, action: "report", payload: [])
        #expect(recorder.all.contains { $0.contains("count 1, ticks") }, "Counter took actions while the reload waited: \(recorder.all)")
        #expect(recorder.matching("left action").isEmpty, "the post is still inside its action")
        #expect(host.generation(of: "org.berth.crasher")?.number == 1 && screen.module?.generation.number == 1, "the old generation runs until the post returns")
        #expect(recorder.matching("event ").count == eventsBefore, "the screen was not taken out under the post: \(recorder.all)")

        openGate("action")
        let fresh = try await reload.value
        #expect(fresh.number == 2)
        #expect(host.generation(of: "org.berth.crasher") === fresh)
        #expect(host.pluginSnapshot("org.berth.crasher")?.generation == 2)
        #expect(screen.module?.generation === fresh && screen.module?.isActive == true, "the gate screen was reopened on the new generation")
        #expect(ok.module?.generation === fresh && ok.module?.isActive == true, "the other crasher screen was reopened on the new generation")
        #expect(host.events.contains { $0.kind == .reloaded }, "\(host.events.map(\.description))")
        // A worker's log lines may trail its replies: the old instance's removal events are waited for.
        let removed = await eventuallyAsync { recorder.matching("event ").count > eventsBefore }
        #expect(removed, "the old instance's removal events ran: \(recorder.all)")
        let lines = recorder.all
        let left = try #require(lines.firstIndex { $0.contains("left action") }, "the post returned: \(lines)")
        #expect(lines[..<left].filter { $0.contains("event ") }.count == eventsBefore, "no removal event before the post returned: \(lines)")
        #expect(lines[left...].contains { $0.contains("event ") }, "the old instance's removal events ran once the post returned: \(lines)")

        // The reopened gate screen was created with its argument, the gate folder: the post its
        // activate starts passes the open gate (with no argument it would wait for good).
        let passed = await eventuallyAsync { recorder.matching("left action").count == 2 }
        #expect(passed, "the reopened screen's post found its gate: \(recorder.all)")

        // The new generation takes an action ("wait-for" an existing folder returns at once,
        // logging "waited") and renders the reopened gate screen.
        try await host.send(screen: ok.id, action: "wait-for", payload: Array(gate.utf8))
        #expect(recorder.matching("waited").count == 1, "\(recorder.all)")
        let tree = try await host.renderOnLane(screen: screen.id)
        #expect(tree?.root?.fields["text"] == "still here")
        #expect(screen.module?.lastTree?.root?.fields["text"] == "still here")
        #expect(!host.events.contains { $0.kind == .failed }, "\(host.events.map(\.description))")
    }
}

/// A screen opened on its lane (`BerthHost.open`, `ScreenMaker.makeScreenOnLane`) whose
/// plugin is not loaded now: a crashed one (its worker started again) or a lazy one is
/// loaded off the main actor first (`generationForUseOffMain`). The crasher is staged with
/// `berth_crasher_entry_gate`, whose entry waits at the gate "load" in the plugin's runtime
/// folder until the test lets it go.
extension RenderLaneTests {
    /// Opens "org.berth.crasher/ok" on its lane while the crasher is not loaded, with its
    /// entry held at the gate: while it waits, Counter's screen takes actions and nothing of
    /// the crasher is recorded or pushed. Returns the opened screen once the gate is open.
    private func openWhileEntryIsHeld(counter: Router) async throws -> Router {
        workspace.stageCrasher(entry: "berth_crasher_entry_gate")
        host.discover()
        let folder = host.runtimeDirectory.folder(of: "org.berth.crasher")
        let gate = GateWatchdog(folder: folder)
        defer { gate.open() }
        let host = host
        let open = Task { @MainActor in try await host.open("org.berth.crasher/ok") }
        let marker = folder + "/entered-load"
        let entered = await eventuallyAsync {
            FileManager.default.fileExists(atPath: marker) || recorder.all.contains { $0.contains("entered load") }
        }
        try #require(entered, "the crasher's entry reached its gate: \(recorder.all)")

        try await host.send(screen: counter.id, action: "increment", payload: [])
        try await host.send(screen: counter.id, action: "report", payload: [])
        #expect(recorder.all.contains { $0.contains("count 1, ticks") }, "Counter took actions while the crasher loaded: \(recorder.all)")
        #expect(host.generation(of: "org.berth.crasher") == nil, "not recorded before its entry returned")
        #expect(host.visibleRouter === counter, "nothing is pushed before the plugin is loaded")
        #expect(!gate.openedByWatchdog, "the host was held until the watchdog opened the gate")

        gate.open()
        return try await open.value
    }

    /// The screen opened on the crasher's generation 2, which the registry records; it renders.
    private func expectOpenedOnNewGeneration(_ screen: Router) async throws {
        let fresh = try #require(screen.module?.generation)
        #expect(fresh.number == 2)
        #expect(host.generation(of: "org.berth.crasher") === fresh)
        #expect(host.plugins["org.berth.crasher"]?.state == .loaded)
        #expect(screen.module?.isActive == true)
        #expect(host.visibleRouter === screen)
        #expect(host.events.contains { $0.kind == .loaded && $0.subject == .plugin("org.berth.crasher") && $0.message.contains("generation 2 loaded") },
                "\(host.events.map(\.description))")
        let tree = try await host.renderOnLane(screen: screen.id)
        #expect(tree?.root?.fields["text"] == "still here")
        #expect(screen.module?.lastTree?.root?.fields["text"] == "still here")
    }

    @Test("opens on a lane: a crashed plugin's screen opened on its lane starts the plugin's worker again off the main actor; other screens take actions meanwhile; the screen opens on the new generation and renders (workers only)",
          .enabled(if: renderLaneTestsRunInWorkers, "a plugin crashes only in a worker: in process it would take the test process down"))
    func crashedPluginOpensOnLane() async throws {
        let counter = try host.push("com.example.counter/counter", argument: Array("3600000".utf8))
        let crashed = try #require(host.generation(of: "org.berth.crasher"))
        try #require(crashed.isolation == .process, "the crasher runs in a worker")
        #expect(throws: FFIError.self) { try crashed.call("crasher_segv", arguments: []) }
        let seen = await eventuallyAsync { host.plugins["org.berth.crasher"]?.state == .crashed }
        try #require(seen, "the crash was seen: \(host.events.suffix(10).map(\.description))")
        #expect(host.events.contains { $0.kind == .crashed && $0.subject == .plugin("org.berth.crasher") })
        #expect(host.generation(of: "org.berth.crasher") == nil)

        let screen = try await openWhileEntryIsHeld(counter: counter)
        try await expectOpenedOnNewGeneration(screen)
        #expect(screen.module?.generation.isolation == .process)
        #expect(screen.module?.generation.workerPID != crashed.workerPID, "a new worker")
    }

    @Test("opens on a lane: a lazy plugin's screen opened on its lane loads the plugin off the main actor; other screens take actions meanwhile; the screen opens on the new generation and renders")
    func lazyPluginOpensOnLane() async throws {
        let counter = try host.push("com.example.counter/counter", argument: Array("3600000".utf8))
        try host.unload("org.berth.crasher")
        host.plugins["org.berth.crasher"]?.deferUntilFirstUse()
        #expect(host.plugins["org.berth.crasher"]?.stateName == "discovered (lazy)")

        let screen = try await openWhileEntryIsHeld(counter: counter)
        try await expectOpenedOnNewGeneration(screen)
    }
}

/// The bound on a sender's requests held behind a delivery on the observer's lane
/// (`Navigator.drain(_:after:from:budgetLeft:)`, `LaneState.hostCallWait`): an observer that
/// does not return holds them that long, no longer. The asker ("org.berth.asker", a second
/// crasher) opens a crasher screen above itself and observes it; its "gate-delegate" and
/// "gate-context" screens wait inside `delegate_received` and `context_received` until the
/// test creates FOLDER/leave-delegate or FOLDER/leave-context.
extension RenderLaneTests {
    @Test("delegates: an observer that does not return holds the sender's pop a while only: the sender closes while the observer is still in its call; the host answers meanwhile; the send returns once the delivery is over")
    func popGoesAfterTheBound() async throws {
        try await expectHeldRequestGoesWhileObserverIsInside("delegate", sent: "picked", call: "delegate 'picked' from screen ", action: "delegate-pop")
    }

    @Test("contexts: an observer that does not return holds terminate's navigation a while only: the sender closes while the observer is still in its call; the host answers meanwhile; the send returns once the delivery is over")
    func terminateGoesAfterTheBound() async throws {
        try await expectHeldRequestGoesWhileObserverIsInside("context", sent: "org.test.Pick", call: "context org.test.Pick", action: "terminate")
    }

    /// The asker's "gate-WHEN" screen observes; its child sends `sent` with `action`, which
    /// then closes the child; the delivery stays inside the asker's plugin until the test lets
    /// it go. The child's close, held behind the delivery, goes through before that.
    private func expectHeldRequestGoesWhileObserverIsInside(_ when: String, sent: String, call: String, action: String) async throws {
        let (counter, observer, child, leave) = try await openObserverAndChild(when, observing: sent)
        defer { _ = FileManager.default.createFile(atPath: leave, contents: nil) }

        let (host, id) = (host, child.id)
        let returned = Locked(false)
        let send = Task { @MainActor in
            try await host.send(screen: id, action: action, payload: Array(sent.utf8))
            returned.withLock { $0 = true }
        }
        let inside = await eventuallyAsync { !recorder.matching("entered \(when)").isEmpty && observer.module?.busyCall != nil }
        try #require(inside, "the delivery reached the asker's lane: \(recorder.all)")
        #expect(observer.module?.busyCall?.function.hasPrefix(call) == true, "\(observer.module?.busyCall?.function ?? "not busy")")
        try await host.send(screen: counter.id, action: "increment", payload: [])
        try await host.send(screen: counter.id, action: "report", payload: [])
        #expect(recorder.all.contains { $0.contains("count 1, ticks") }, "\(recorder.all)")

        let closed = await eventuallyAsync { host.router(id) == nil }
        #expect(closed, "the sender's held request ran, the observer still in its call: \(host.openRouters.map(\.route))")
        #expect(recorder.matching("received \(when)").isEmpty, "the observer is still inside the delivery: \(recorder.all)")
        #expect(observer.module?.busyCall?.function.hasPrefix(call) == true, "\(observer.module?.busyCall?.function ?? "not busy")")
        #expect(host.visibleRouter === observer)
        let returnedEarly = returned.withLock { $0 }
        #expect(!returnedEarly, "the sender's send waits for the delivery")
        try await host.send(screen: counter.id, action: "increment", payload: [])
        #expect(recorder.all.contains { $0.contains("count is 2") }, "Counter still answers: \(recorder.all)")

        #expect(FileManager.default.createFile(atPath: leave, contents: nil))
        try await send.value
        let returnedAtLast = returned.withLock { $0 }
        #expect(returnedAtLast)
        #expect(recorder.matching("received \(when) \(sent)").count == 1, "delivered once let go: \(recorder.all)")
        #expect(observer.module?.isBusy == false)
        #expect(host.visibleRouter === observer)
        #expect(!host.events.contains { $0.kind == .failed }, "\(host.events.map(\.description))")
    }
}
