import Testing
@testable import BerthCLI

/// `quit` and `restart` from the control socket reach the front end however early they come:
/// the socket serves commands before the front end's service starts, and on a loaded
/// machine that start can lag by seconds (a `berth run` then ignored its `quit` for good).
@Suite("berth run: a quit before the front end started") @MainActor
struct LoopControlTests {
    @Test("a front end that sets its wake-up after a quit or restart came is woken at once; one set before is woken when it comes")
    func wakeAfterQuit() {
        for request in ["quit", "restart"] {
            let control = LoopControl()
            if request == "quit" { control.finished = true } else { control.restartRequested = true }
            var woken = 0
            control.setWake { woken += 1 }
            #expect(woken == 1, "\(request) before the front end started")
        }
        let control = LoopControl()
        var woken = 0
        control.setWake { woken += 1 }
        #expect(woken == 0)
        control.finished = true
        #expect(woken == 1)
    }
}
