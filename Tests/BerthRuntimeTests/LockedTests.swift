import Foundation
import Testing
@_spi(Engine) @testable import BerthRuntime

/// `Locked`, the one lock: mutual exclusion and the sleep of a contended thread (a lost
/// wake would leave a thread asleep for good, and the test would hang).
@Suite("Locked")
struct LockedTests {
    @Test("threads that hold it long enough to make others sleep each see the value alone, and all finish")
    func contended() {
        let counter = Locked(0)
        let threads = 8, each = 200
        let group = DispatchGroup()
        for _ in 0..<threads {
            group.enter()
            Thread.detachNewThread {
                for _ in 0..<each {
                    counter.withLock { value in
                        // A read, a pause, a write: another holder inside would lose an increment.
                        // The pause is 20 µs of the clock, spun (longer than the contended
                        // path's spin, so others sleep), not a count of sched_yield: under a
                        // loaded machine each yield can cost a time slice, and 320,000 of them
                        // outlasted the deadline in a CI run (69 of 1,600 done in 120 s).
                        let seen = value
                        let until = DispatchTime.now().uptimeNanoseconds + 20_000
                        while DispatchTime.now().uptimeNanoseconds < until {}
                        value = seen + 1
                    }
                }
                group.leave()
            }
        }
        #expect(group.wait(timeout: .now() + 120) == .success, "a thread never woke up")
        #expect(counter.withLock { $0 } == threads * each)
    }

    @Test("withLockIfAvailable gives up while another thread holds it, and takes it once free")
    func ifAvailable() {
        let lock = Locked("free")
        let held = DispatchSemaphore(value: 0), release = DispatchSemaphore(value: 0), done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            lock.withLock { _ in
                held.signal()
                release.wait()
            }
            done.signal()
        }
        held.wait()
        #expect(lock.withLockIfAvailable { $0 } == nil)
        release.signal()
        done.wait()
        #expect(lock.withLockIfAvailable { value -> String in
            value = "taken"
            return value
        } == "taken")
    }
}
