import BerthCore
internal import Glibc
private import CBerthSystem

/// The worker's side of `denied` events for refused system calls: a thread that reads the
/// records the SIGSYS handler writes (`berth_seccomp_next_refusal`) and tells the host of
/// the first refusal of each call and of every tenfold count after it (1, 10, 100, …), so
/// a plugin that loops on a refused call sends a handful of notifications, not a flood.
enum RefusedCallReporter {
    /// Starts the reading thread on `descriptor` (the pipe's read end); it ends with the pipe.
    static func start(reading descriptor: Int32) {
        DetachedThread.start(name: "berth-refused-calls") {
            var counts: [String: UInt64] = [:]
            var text = [CChar](repeating: 0, count: 96)
            while berth_seccomp_next_refusal(descriptor, &text, text.count) >= 0 {
                let call = String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
                let count = counts[call, default: 0] + 1
                counts[call] = count
                guard RefusalCount.isReported(count) else { continue }
                WorkerShared.current.withLock { $0 }?.notify(.refusedSystemCall(call: call, count: count))
            }
        }
    }
}
