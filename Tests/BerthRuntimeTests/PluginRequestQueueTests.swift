import Testing
@_spi(Engine) @testable import BerthRuntime

/// The queue of work plugins ask for during a call, drained at top level.
@Suite("Plugin request queue: order, re-entry and the budget") @MainActor
struct PluginRequestQueueTests {
    @Test("work runs in order, each through the caller's wrapper; work queued while draining runs in the same drain")
    func orderAndRequeue() {
        let queue = PluginRequestQueue()
        var ran: [String] = []
        var wrapped = 0
        queue.enqueue { ran.append("a"); queue.enqueue { ran.append("c") } }
        queue.enqueue { ran.append("b") }
        let (dropped, rest, _) = queue.drain { work in
            wrapped += 1
            work()
            return true
        }
        #expect(ran == ["a", "b", "c"] && wrapped == 3 && dropped == 0 && rest.isEmpty)
        let again = queue.drain { $0(); return true }
        #expect(again.dropped == 0 && ran.count == 3)
    }

    @Test("a drain asked for inside a drain does nothing; the outer one runs what is queued")
    func nestedDrain() {
        let queue = PluginRequestQueue()
        var ran: [String] = []
        var inner = -1
        queue.enqueue {
            queue.enqueue { ran.append("second") }
            inner = queue.drain { $0(); return true }.dropped
            ran.append("first")
        }
        _ = queue.drain { $0(); return true }
        #expect(inner == 0 && ran == ["first", "second"])
    }

    @Test("a plugin that keeps asking stops at the budget; the rest is dropped and counted; what a stopped drain held goes on with the budget it had left")
    func budget() {
        let queue = PluginRequestQueue(budget: 5)
        var runs = 0
        func again() {
            runs += 1
            queue.enqueue(again)
            queue.enqueue(again)
        }
        queue.enqueue(again)
        let (dropped, held, left) = queue.drain { work in
            work()
            return runs < 3
        }
        #expect(dropped == 0 && runs == 3 && held.count == 4 && left == 2)
        queue.enqueueFirst(held, budgetLeft: left)
        let after = queue.drain { $0(); return true }.dropped
        #expect(runs == 5 && after == 6)
        let next = queue.drain { $0(); return true }.dropped
        #expect(next == 0 && runs == 5)
    }

    @Test("a drain its wrapper stops hands back the plugins' requests not run, in order, and still runs the host's own work; what is queued first runs next")
    func stoppedDrain() {
        let queue = PluginRequestQueue()
        var ran: [String] = []
        queue.enqueue { ran.append("a") }
        queue.enqueue { ran.append("b") }
        queue.enqueueHostWork { ran.append("host") }
        queue.enqueue { ran.append("c") }
        let (dropped, held, _) = queue.drain { work in
            work()
            return ran != ["a"]
        }
        #expect(ran == ["a", "host"] && dropped == 0 && held.count == 2)
        queue.enqueue { ran.append("d") }
        queue.enqueueFirst(held)
        _ = queue.drain { $0(); return true }
        #expect(ran == ["a", "host", "b", "c", "d"])
    }
}
