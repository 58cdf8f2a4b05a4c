import Foundation
import Testing
@_spi(Engine) @testable import BerthRuntime

/// `LockedCondition`, the one condition variable: a `Locked` value and a futex sequence
/// word. A lost wake leaves a thread asleep for good; each test then fails at its (long)
/// hang guard instead of hanging CI. Nothing here measures time.
@Suite("LockedCondition")
struct LockedConditionTests {
    private struct Gate {
        var open = false
        var looks = 0
        var through = 0
    }

    /// Starts `count` threads of `body` (each given its index); the group leaves as each returns.
    private func run(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) -> DispatchGroup {
        let group = DispatchGroup()
        for index in 0..<count {
            group.enter()
            Thread.detachNewThread {
                body(index)
                group.leave()
            }
        }
        return group
    }

    /// Spins (yielding) until `condition` holds with the lock held.
    private func spin<Value>(_ locked: LockedCondition<Value>, until condition: (Value) -> Bool) {
        while !locked.withLock({ condition($0) }) { sched_yield() }
    }

    private func passGate(_ gate: LockedCondition<Gate>) {
        gate.wait { gate, _ -> LockedCondition<Gate>.Decision<Void> in
            gate.looks += 1
            guard gate.open else { return .wait }
            gate.through += 1
            return .finish(())
        }
    }

    @Test("a waiter that looked and found nothing wakes at a signal and sees the change")
    func signalWakesWaiter() {
        let gate = LockedCondition(Gate())
        let group = run(1) { _ in passGate(gate) }
        spin(gate) { $0.looks >= 1 }
        gate.withLock { $0.open = true }
        gate.signal()
        #expect(group.wait(timeout: .now() + 120) == .success, "the waiter never woke")
        #expect(gate.withLock { $0.through } == 1)
    }

    @Test("a change made outside the lock and signalled between a look and the sleep wakes the waiter")
    func changeOutsideTheLockBetweenLookAndSleep() {
        // A lane's wait for the main actor's answer: the answer is in a `Locked` of its own,
        // which the look reads. Here the "other thread" acts inside the look itself, after it
        // found nothing: the latest moment its change and signal can come before the sleep.
        let answer = Locked(false)
        let condition = LockedCondition(0)
        let outcome = condition.wait { _, timedOut -> LockedCondition<Int>.Decision<String> in
            if timedOut { return .finish("slept past the answer") }
            if answer.withLock({ $0 }) { return .finish("answered") }
            answer.withLock { $0 = true }
            condition.broadcast()
            return .waitUntil(.now + .seconds(120))
        }
        #expect(outcome == "answered")
    }

    @Test("one broadcast wakes every waiter")
    func broadcastWakesAll() {
        let gate = LockedCondition(Gate())
        let waiters = 8
        let group = run(waiters) { _ in passGate(gate) }
        spin(gate) { $0.looks >= waiters }
        gate.withLock { $0.open = true }
        gate.broadcast()
        #expect(group.wait(timeout: .now() + 120) == .success, "a waiter never woke")
        #expect(gate.withLock { $0.through } == waiters)
    }

    @Test("a deadline that passes with no wake returns timedOut, the value untouched")
    func deadlinePasses() {
        let gate = LockedCondition(Gate())
        let deadline = ContinuousClock.now + .milliseconds(20)
        let (timedOut, open) = gate.wait { gate, timedOut -> LockedCondition<Gate>.Decision<(Bool, Bool)> in
            gate.looks += 1
            if gate.open || timedOut { return .finish((timedOut, gate.open)) }
            return .waitUntil(deadline)
        }
        #expect(timedOut)
        #expect(!open)
        #expect(gate.withLock { $0.looks } >= 2)
    }

    @Test("a deadline already past times out at once; a far one is still woken by a signal")
    func pastAndFarDeadlines() {
        let gate = LockedCondition(Gate())
        let past = gate.wait { _, timedOut -> LockedCondition<Gate>.Decision<Bool> in
            timedOut ? .finish(true) : .waitUntil(ContinuousClock.now - .seconds(1))
        }
        #expect(past)
        let far = ContinuousClock.now + .seconds(86_400 * 365 * 100)
        let woken = LockedCondition<Bool?>(nil)
        let group = run(1) { _ in
            let timedOut = gate.wait { gate, timedOut -> LockedCondition<Gate>.Decision<Bool> in
                gate.looks += 1
                return gate.open || timedOut ? .finish(timedOut) : .waitUntil(far)
            }
            woken.withLock { $0 = timedOut }
        }
        spin(gate) { $0.looks >= 1 }
        gate.withLock { $0.open = true }
        gate.signal()
        #expect(group.wait(timeout: .now() + 120) == .success, "the waiter never woke")
        #expect(woken.withLock { $0 } == false)
    }

    @Test("many producers and consumers, one signal per item: every item is taken and every thread finishes")
    func noLostWake() {
        struct Queue {
            var items = 0
            var taken = 0
        }
        let queue = LockedCondition(Queue())
        let producers = 4, consumers = 4, each = 2_000
        let total = producers * each
        let consuming = run(consumers) { _ in
            while true {
                let done = queue.wait { queue, _ -> LockedCondition<Queue>.Decision<Bool> in
                    if queue.taken == total { return .finish(true) }
                    guard queue.items > 0 else { return .wait }
                    queue.items -= 1
                    queue.taken += 1
                    return .finish(queue.taken == total)
                }
                if done {
                    // The last item: wake the consumers still asleep so they see the end.
                    queue.broadcast()
                    return
                }
            }
        }
        let producing = run(producers) { _ in
            for _ in 0..<each {
                queue.withLock { $0.items += 1 }
                queue.signal()
            }
        }
        #expect(producing.wait(timeout: .now() + 120) == .success, "a producer never finished")
        #expect(consuming.wait(timeout: .now() + 120) == .success, "a consumer slept through an item")
        #expect(queue.withLock { ($0.items, $0.taken) } == (0, total))
    }

    @Test("two threads taking turns through signals alone never both sleep")
    func pingPong() {
        let turn = LockedCondition(0)
        let rounds = 5_000
        let group = run(2) { side in
            for round in 0..<rounds {
                turn.wait { turn, _ -> LockedCondition<Int>.Decision<Void> in
                    guard turn == round * 2 + side else { return .wait }
                    turn += 1
                    return .finish(())
                }
                turn.signal()
            }
        }
        #expect(group.wait(timeout: .now() + 120) == .success, "both sides slept: a wake was lost")
        #expect(turn.withLock { $0 } == rounds * 2)
    }
}
