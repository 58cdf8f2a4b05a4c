import Foundation

/// What the test process itself must be, set once by what a test touches first (the build
/// products, a workspace).
enum TestProcess {
    /// A write to a pipe whose reader has ended (the standard input of a host or a `berth
    /// dev` that exited) fails with EPIPE instead of raising SIGPIPE, whose default action
    /// ends the whole test run at once, with no summary: a fresh-clone CI's `swift test`
    /// ended that way, exit status 1, mid-run.
    static let prepared: Void = {
        signal(SIGPIPE, SIG_IGN)
    }()
}
