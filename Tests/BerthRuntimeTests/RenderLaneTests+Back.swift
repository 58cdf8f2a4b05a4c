import Foundation
import Testing
@_spi(Engine) @testable import BerthRuntime
import BerthTestSupport

/// A front end's back, dismiss and close (`userBackOnLane`, `userDismissOnLane`,
/// `closeScreenOnLane`) render the screen they leave visible on its plugin's lane.
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

    @Test("back: a screen whose plugin waits inside its deactivate leaves at once and the screen beneath renders; the host goes on; its close calls run on its lane in the order issued, and what its deactivate persists lands")
    func backDoesNotWaitForDeactivate() async throws {
        #expect(FileManager.default.createFile(atPath: gate + "/ask-activate", contents: Data("persist-deactivate".utf8)))
        // No tick lands in the test: each would end an operation that renders the visible screen.
        let counter = try host.push("com.example.counter/counter", argument: Array("3600000".utf8))
        let closing = try host.push("org.berth.crasher/gate-deactivate", argument: Array(gate.utf8))
        let connection = try #require(closing.module?.generation.connection)
        let (passes, eventsBefore) = (try #require(counter.module).renderPasses, recorder.matching("event ").count)
        // A host that waited for the deactivate would hold the test until the watchdog let it go.
        let watchdog = GateWatchdog(folder: gate, when: "deactivate")
        defer { watchdog.open() }

        try await host.userBackOnLane()
        #expect(!watchdog.openedByWatchdog, "the back waited for the plugin's deactivate")
        #expect(closing.isReleased && host.visibleRouter === counter, "the screen left at once")
        #expect(counter.module?.renderPasses == passes + 1, "the screen beneath rendered")
        let inside = await eventuallyAsync { !recorder.matching("entered deactivate").isEmpty }
        try #require(inside, "the deactivate runs on the crasher's lane: \(recorder.all)")
        #expect(connection.busyCall?.closes == true, "\(connection.busyCall?.description ?? "not busy")")
        try await host.send(screen: counter.id, action: "increment", payload: [])
        try await host.send(screen: counter.id, action: "report", payload: [])
        #expect(recorder.all.contains { $0.contains("count 1, ticks") }, "Counter took actions meanwhile: \(recorder.all)")
        #expect(recorder.matching("left deactivate").isEmpty, "all of it while the plugin was inside its deactivate: \(recorder.all)")
        // A user's back: the container removed the screen, so its removal events came first.
        let lines = recorder.all
        let entered = try #require(lines.firstIndex { $0.contains("entered deactivate") })
        #expect(lines[..<entered].filter { $0.contains("event ") }.count == eventsBefore + 2, "in the order the host issued them: \(lines)")

        watchdog.open()
        let over = await eventuallyAsync { connection.busyCall == nil && !recorder.matching("persisted on deactivate").isEmpty }
        #expect(over, "the close calls ran once the deactivate returned: \(recorder.all)")
        #expect(recorder.matching("persisted on deactivate").count == 1, "\(recorder.all)")
        #expect(host.persistedValue(plugin: "org.berth.crasher", key: "n") == Array("closed".utf8))
        #expect(!host.events.contains { $0.kind == .failed }, "\(host.events.map(\.description))")
    }
}
