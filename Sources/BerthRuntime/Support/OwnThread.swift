import Foundation

/// Blocking work (a file read and hashed, a worker process started) on a new thread of its
/// own: the caller is suspended, not blocked, and no thread of Swift concurrency's pool is
/// held for it.
enum OwnThread {
    /// Runs `work` on a new thread and returns its result.
    static func run<T: Sendable>(_ work: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            Thread.detachNewThread { continuation.resume(returning: work()) }
        }
    }
}
