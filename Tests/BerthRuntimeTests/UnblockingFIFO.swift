import Foundation
import Testing
@_spi(Engine) @testable import BerthRuntime

/// Runs `body` on a thread of its own and returns what it returned. Code that opens a FIFO
/// to read it blocks until a writer comes: if `body` has not returned within 10 s, the
/// wait is recorded as an issue and the FIFO is opened for writing (each open frees one
/// blocked read) until `body` returns, for at most 30 s more. A regression fails the test
/// instead of hanging the run.
func withoutWaitingOn<Result: Sendable>(fifo: String, _ what: String, _ body: @escaping @Sendable () -> Result) -> Result? {
    let outcome = Locked<Result?>(nil)
    let done = DispatchSemaphore(value: 0)
    Thread {
        let result = body()
        outcome.withLock { $0 = result }
        done.signal()
    }.start()
    if done.wait(timeout: .now() + 10) == .timedOut {
        Issue.record("\(what) waited for a writer on the FIFO \(fifo)")
        for _ in 0..<300 {
            let writer = open(fifo, O_WRONLY | O_NONBLOCK)
            if writer >= 0 { close(writer) }
            if done.wait(timeout: .now() + .milliseconds(100)) == .success { break }
        }
    }
    return outcome.withLock { $0 }
}
