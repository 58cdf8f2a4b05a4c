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
}
