import Testing
@_spi(Engine) @testable import BerthRuntime
import BerthTestSupport

/// Test-only leak detector: tracks routers, interactors, module instances and managed
/// tasks weakly, and fails the test when any is still alive after it was released.
@MainActor
final class LeakDetector {
    private struct Tracked {
        weak var object: AnyObject?
        let name: String
    }

    private var tracked: [Tracked] = []

    /// Tracks a router and everything it holds now (interactor, module instance, tasks).
    func track(_ router: Router) {
        tracked.append(Tracked(object: router, name: "router \(router.id)"))
        if let interactor = router.interactor {
            tracked.append(Tracked(object: interactor, name: "interactor of screen \(router.id)"))
            tracked.append(Tracked(object: interactor.module, name: "module instance of screen \(router.id)"))
            for task in interactor.runningTasks {
                tracked.append(Tracked(object: task, name: "managed task '\(task.key)' of screen \(router.id)"))
            }
        }
    }

    /// How many tracked objects are still alive.
    var aliveCount: Int { tracked.filter { $0.object != nil }.count }

    /// Fails the current test for every tracked object still alive. A managed task's
    /// worker thread may hold its task for a moment after signalling that it finished, so
    /// the check allows the main actor time to let those last references go (a deadline: the
    /// main actor is shared by the whole suite).
    func expectAllReleased(sourceLocation: SourceLocation = #_sourceLocation) async {
        await eventuallyAsync(timeout: .seconds(30)) { aliveCount == 0 }
        for entry in tracked where entry.object != nil {
            Issue.record("\(entry.name) is still alive after release", sourceLocation: sourceLocation)
        }
    }
}
