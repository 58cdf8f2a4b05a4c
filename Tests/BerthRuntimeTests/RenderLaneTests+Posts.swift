import Foundation
import Testing
@_spi(Engine) @testable import BerthRuntime
import BerthTestSupport

/// A managed task's post runs on its plugin's lane (Docs/lanes.md): the host goes on while
/// the plugin's action runs. The crasher's "gate-action" screen, with FOLDER/ask-activate
/// saying "post", starts a task in its activate that posts the action "asked" to itself;
/// that action waits at the gate until the test creates FOLDER/leave-action.
extension RenderLaneTests {
    /// Opens the gate screen whose task posts an action that waits at the gate, and returns
    /// once the post is inside that action on the crasher's lane.
    private func openScreenWithWaitingPost() async throws -> Router {
        #expect(FileManager.default.createFile(atPath: gate + "/ask-activate", contents: Data("post".utf8)))
        let screen = try host.push("org.berth.crasher/gate-action", argument: Array(gate.utf8))
        for _ in 0..<6_000 where recorder.matching("entered action").isEmpty || screen.module?.busyCall?.function != "action 'asked'" {
            try await Task.sleep(for: .milliseconds(10))
        }
        try #require(!recorder.matching("entered action").isEmpty && screen.module?.busyCall?.function == "action 'asked'",
                     "the task's post reached the crasher's lane: \(recorder.all)")
        return screen
    }

    @Test("posts: a task's post runs on its plugin's lane; other screens take actions meanwhile; a person's action to that screen waits for the post instead of being refused")
    func postOnLane() async throws {
        // No tick lands in the test: each would end an operation that renders the visible screen.
        let counter = try host.push("com.example.counter/counter", argument: Array("3600000".utf8))
        defer { openGate("action") }
        let screen = try await openScreenWithWaitingPost()

        #expect(screen.module?.isBusy == true, "the screen is busy while its plugin runs the post")
        try await host.send(screen: counter.id, action: "increment", payload: [])
        try await host.send(screen: counter.id, action: "report", payload: [])
        #expect(recorder.all.contains { $0.contains("count 1, ticks") }, "\(recorder.all)")
        let (host, id) = (host, screen.id)
        let later = Task { @MainActor in try await host.send(screen: id, action: "asked", payload: []) }
        try await host.send(screen: counter.id, action: "increment", payload: [])
        #expect(recorder.matching("left action").isEmpty, "the post is still inside its action after Counter's actions")
        #expect(recorder.matching("ran asked").isEmpty)

        openGate("action")
        try await later.value
        #expect(recorder.matching("ran asked").count == 2, "the post's action ran, then the person's: \(recorder.all)")
        #expect(!host.events.contains { $0.kind == .failed }, "nothing was refused as busy: \(host.events.map(\.description))")
        #expect(screen.module?.isBusy == false)
    }

    @Test("posts: a synchronous call into a plugin whose task's post is on its lane waits for the post to return, then goes on")
    func synchronousCallWaitsForPost() async throws {
        defer { openGate("action") }
        _ = try await openScreenWithWaitingPost()
        // The main thread is about to wait in `push`, blocking: the gate opens once it does.
        let leave = gate + "/leave-action"
        Thread.detachNewThread {
            while !MainThreadWait.isWaiting { usleep(1_000) }
            _ = FileManager.default.createFile(atPath: leave, contents: nil)
        }

        let pushed = try host.push("org.berth.crasher/ok")
        #expect(recorder.matching("ran asked").count == 1, "the post returned before the push's create: \(recorder.all)")
        #expect(host.visibleRouter === pushed)
        #expect(!host.events.contains { $0.kind == .failed }, "nothing was refused as busy: \(host.events.map(\.description))")
    }
}
