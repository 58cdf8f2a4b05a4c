import Foundation
import Testing
@_spi(Engine) @testable import BerthRuntime
import BerthTestSupport

/// A screen that starts a ticking managed task in `activate`, sent an action at once after
/// its push: the task's posted ticks still reach it. Runs in both modes. Its one CI failure
/// ("ticks 0" at the 120 s deadline; no other test finished in those 120 s) was
/// the wait's: the main actor was held past the deadline, and the wait looked last before the
/// ticks queued behind it (EventuallyAsyncTests); no tick was lost.
@Suite("Posted task results right after a push") @MainActor
struct TaskTicksAfterPushTests {
    @Test("an action sent at once after the push does not keep the task's ticks from arriving", arguments: 0..<4)
    func actionRightAfterPush(_ attempt: Int) async throws {
        let workspace = PluginWorkspace()
        workspace.stage("counter.json")
        let host = try workspace.makeHost()
        try host.load("com.example.counter")
        let screen = try host.push("counter", argument: Array("10".utf8))
        try host.sendBlocking(screen: screen.id, action: "increment", payload: [])
        var title = ""
        let arrived = await eventuallyAsync {
            title = (try? host.render(screen: screen.id))?.allNodes.compactMap { $0.fields["text"] }.first { $0.contains("ticks") } ?? ""
            return !title.isEmpty && !title.hasSuffix("ticks 0")
        }
        #expect(arrived, "attempt \(attempt): still '\(title)'")
        host.close(screen)
    }
}
