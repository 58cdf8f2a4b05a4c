import Foundation
import Testing
@_spi(Engine) @testable import BerthRuntime
import BerthTestSupport

/// A front end's back, dismiss and close (`userBackOnLane`, `userDismissOnLane`,
/// `closeScreenOnLane`) render the screen they leave visible on its plugin's lane; they, and
/// a close a plugin asks for during a call on a lane, make the closed screen's calls into its
/// plugin on that plugin's lane (the crasher's "gate-deactivate" waits inside `deactivate`).
extension RenderLaneTests {
    @Test("back: the screen left visible renders on its lane; while it waits inside that render, other screens take actions; back returns once it rendered")
    func backRendersOnLane() async throws {
        // No tick lands in the test: each would end an operation that renders the visible screen.
        let counter = try host.push("com.example.counter/counter", argument: Array("3600000".utf8))
        let gated = try host.push("org.berth.crasher/gate-render", argument: Array(gate.utf8))
        let top = try host.push("com.example.counter/counter", argument: Array("3600000".utf8))
        let passes = try #require(gated.module).renderPasses
        armRenderGate()
        let host = host
        let back = Task { @MainActor in try await host.userBackOnLane() }
        defer { openGate() }
        try await waitUntilInsideRender(gated)

        #expect(top.isReleased, "the top screen left at once")
        #expect(host.visibleRouter === gated)
        try await host.send(screen: counter.id, action: "increment", payload: [])
        try await host.send(screen: counter.id, action: "report", payload: [])
        #expect(recorder.all.contains { $0.contains("count 1, ticks") }, "\(recorder.all)")
        #expect(recorder.matching("left render").isEmpty, "still inside the render after Counter's actions")

        #expect(FileManager.default.createFile(atPath: gate + "/leave-render", contents: nil))
        try await back.value
        #expect(gated.module?.renderPasses == passes + 1, "rendered once, on its lane")
        #expect(gated.module?.isBusy == false)
        #expect(recorder.matching("left render").count == 1)
    }

    @Test("close and dismiss on lanes: the screen left visible is rendered once, and nothing fails")
    func closeAndDismissRenderOnLane() async throws {
        let below = try host.push("org.berth.crasher/ok")
        let presented = try host.present("com.example.counter/counter", argument: Array("3600000".utf8))
        let passes = try #require(below.module).renderPasses
        try await host.userDismissOnLane()
        #expect(presented.isReleased && host.visibleRouter === below)
        #expect(below.module?.renderPasses == passes + 1)

        let top = try host.push("com.example.counter/counter", argument: Array("3600000".utf8))
        try await host.closeScreenOnLane(top.id)
        #expect(top.isReleased && host.visibleRouter === below)
        #expect(below.module?.renderPasses == passes + 2)
        #expect(!host.events.contains { $0.kind == .failed }, "\(host.events.map(\.description))")
    }

    @Test("back: a screen whose plugin waits inside its deactivate leaves at once, back returns and the screen beneath renders; the host goes on; its close calls run on its lane in the order issued, and what the deactivate persists lands")
    func backDoesNotWaitForDeactivate() async throws {
        #expect(FileManager.default.createFile(atPath: gate + "/ask-activate", contents: Data("persist-deactivate".utf8)))
        // No tick lands in the test: each would end an operation that renders the visible screen.
        let counter = try host.push("com.example.counter/counter", argument: Array("3600000".utf8))
        let closing = try host.push("org.berth.crasher/gate-deactivate", argument: Array(gate.utf8))
        let (passes, eventsBefore) = (try #require(counter.module).renderPasses, recorder.matching("event ").count)
        let host = host
        try await expectHostGoesOnInsideDeactivate(counter, of: closing, waits: false, during: { try await host.userBackOnLane() }) {
            #expect(host.visibleRouter === counter)
            let rendered = await eventuallyAsync { counter.module?.renderPasses == passes + 1 && counter.module?.isBusy == false }
            #expect(rendered, "the screen beneath rendered meanwhile")
            // A user's back: the container removed the screen, so its removal events came first.
            let lines = recorder.all
            let entered = lines.firstIndex { $0.contains("entered deactivate") } ?? 0
            #expect(lines[..<entered].filter { $0.contains("event ") }.count == eventsBefore + 2, "in the order the host issued them: \(lines)")
        }
        let persisted = await eventuallyAsync { !recorder.matching("persisted on deactivate").isEmpty }
        #expect(persisted && recorder.matching("persisted on deactivate").count == 1, "\(recorder.all)")
        #expect(host.persistedValue(plugin: "org.berth.crasher", key: "n") == Array("closed".utf8))
    }

    @Test("back: when the screen beneath is the same plugin's, back still returns at once; that screen renders on its lane once the closed screen's calls are over")
    func backToSamePluginRendersAfterClose() async throws {
        // No tick lands in the test: each would end an operation that renders the visible screen.
        let counter = try host.push("com.example.counter/counter", argument: Array("3600000".utf8))
        let beneath = try host.push("org.berth.crasher/ok")
        let closing = try host.push("org.berth.crasher/gate-deactivate", argument: Array(gate.utf8))
        let passes = try #require(beneath.module).renderPasses
        let host = host
        try await expectHostGoesOnInsideDeactivate(counter, of: closing, waits: false, during: { try await host.userBackOnLane() }) {
            #expect(host.visibleRouter === beneath)
            #expect(beneath.module?.renderPasses == passes, "not rendered while its plugin is inside the closed screen's deactivate")
        }
        // The pass counts from its start on the lane; the render is over once the lane is free.
        let rendered = await eventuallyAsync { beneath.module?.renderPasses == passes + 1 && beneath.module?.isBusy == false }
        #expect(rendered, "rendered once, after the close")
        #expect(beneath.module?.lastTree?.root?.fields["text"] == "still here")
    }

    @Test("closes a plugin asks for: a screen that terminates itself during its action leaves at once; its deactivate runs on its lane while the host answers; send returns once it is done")
    func sendWaitsForTheCloseItCaused() async throws {
        // No tick lands in the test: each would end an operation that renders the visible screen.
        let counter = try host.push("com.example.counter/counter", argument: Array("3600000".utf8))
        let gated = try host.push("org.berth.crasher/gate-deactivate", argument: Array(gate.utf8))
        let (host, id) = (host, gated.id)
        // No screen observes the context: terminate goes back one screen, closing the sender.
        try await expectHostGoesOnInsideDeactivate(counter, of: gated, waits: true, during: {
            try await host.send(screen: id, action: "terminate", payload: Array("org.test.Nobody".utf8))
        }) {
            #expect(host.visibleRouter === counter)
        }
    }

    /// Runs `operation`, which closes `closing` (the crasher's "gate-deactivate" screen), in a
    /// task. While the plugin waits inside that screen's `deactivate` on its lane: the screen
    /// has left, `whileInside` holds, Counter takes actions, and `operation` has returned
    /// (`waits` false: a front end's close) or not (a close the plugin asked for). Then the
    /// deactivate goes on; once its lane is free, nothing failed.
    private func expectHostGoesOnInsideDeactivate(_ counter: Router, of closing: Router, waits: Bool,
                                                  during operation: @escaping @MainActor () async throws -> Void,
                                                  whileInside: () async throws -> Void) async throws {
        let connection = try #require(closing.module?.generation.connection)
        // A host that waited for the deactivate would hold the test until the watchdog let it go.
        let watchdog = GateWatchdog(folder: gate, when: "deactivate")
        defer { watchdog.open() }
        let returned = Locked(false)
        let closed = Task { @MainActor in
            try await operation()
            returned.withLock { $0 = true }
        }
        let inside = await eventuallyAsync { !recorder.matching("entered deactivate").isEmpty }
        try #require(inside, "the deactivate runs on the crasher's lane: \(recorder.all)")
        if !waits { try await closed.value }
        #expect(closing.isReleased, "the screen left at once")
        #expect(connection.busyCall?.closes == true, "\(connection.busyCall?.description ?? "not busy")")
        try await whileInside()
        try await host.send(screen: counter.id, action: "increment", payload: [])
        try await host.send(screen: counter.id, action: "report", payload: [])
        #expect(recorder.all.contains { $0.contains("count 1, ticks") }, "Counter took actions meanwhile: \(recorder.all)")
        let returnedInside = returned.withLock { $0 }
        #expect(returnedInside != waits, waits ? "it waits for the close it caused" : "it returned at once")
        #expect(recorder.matching("left deactivate").isEmpty, "all of it while the plugin was inside its deactivate")

        watchdog.open()
        try await closed.value
        let over = await eventuallyAsync { connection.busyCall == nil }
        #expect(over && !watchdog.openedByWatchdog, "the host waited for the plugin's deactivate: \(recorder.all)")
        #expect(recorder.matching("left deactivate").count == 1, "\(recorder.all)")
        #expect(!host.events.contains { $0.kind == .failed }, "\(host.events.map(\.description))")
    }
}
