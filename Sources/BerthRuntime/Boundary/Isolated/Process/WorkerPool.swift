import Foundation

/// Workers started before they are needed. A worker spends most of its start-up loading
/// the Swift runtime and Foundation; a host that keeps one started worker waiting hands it
/// the next load (a reload, a respawn after a crash, a canary), so that cost leaves the
/// reload's critical path. At most one waits per executable; taking it starts the next in
/// the background. A waiting worker is an ordinary child: it dies with the host
/// (PR_SET_PDEATHSIG) and its plugin is only named by the `hello` it is sent.
///
/// `@unchecked Sendable`: `idle` and `starting` are guarded by `lock`.
final class WorkerPool: @unchecked Sendable {
    static let shared = WorkerPool()

    private let lock = NSLock()
    private var idle: [String: WorkerProcess] = [:]
    private var starting: Set<String> = []

    /// A worker of `executable` for `plugin`. With `keepOneReady`: the waiting one when it is
    /// still alive, and another is started in the background for next time; without it, a
    /// new one (a host that keeps none ready takes none).
    func take(executable: String, plugin: String, keepOneReady: Bool) throws(WorkerSpawnError) -> WorkerProcess {
        guard keepOneReady else { return try WorkerProcess.spawn(executable: executable, plugin: plugin) }
        let waiting = lock.withLock { idle.removeValue(forKey: executable) }
        startOne(executable)
        if let waiting, waiting.termination == nil { return waiting }
        return try WorkerProcess.spawn(executable: executable, plugin: plugin)
    }

    /// The process id of the worker waiting for `executable`, if one is ready.
    func waitingWorker(of executable: String) -> Int32? { lock.withLock { idle[executable]?.pid } }

    private func startOne(_ executable: String) {
        let start = lock.withLock { idle[executable] == nil && starting.insert(executable).inserted }
        guard start else { return }
        DispatchQueue.global(qos: .utility).async {
            let worker = try? WorkerProcess.spawn(executable: executable, plugin: "a waiting worker")
            self.lock.withLock {
                self.starting.remove(executable)
                if self.idle[executable] == nil { self.idle[executable] = worker }
            }
        }
    }
}
