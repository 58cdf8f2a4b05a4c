@_spi(Engine) import BerthCore
import Foundation

/// Workers started before they are needed. A worker spends most of its start-up loading
/// the Swift runtime and Foundation; a host that keeps one started worker waiting hands it
/// the next load (a reload, a respawn after a crash, a canary), so that cost leaves the
/// reload's critical path. At most one waits per executable; taking it starts the next in
/// the background. A waiting worker is an ordinary child: it dies with the host
/// (PR_SET_PDEATHSIG) and its plugin is only named by the `hello` it is sent.
///
/// Each host owns one (its generation maker's); `drain()`, at the host's shutdown, ends the
/// waiting workers and any still starting.
final class WorkerPool: Sendable {
    private struct Workers {
        /// The waiting worker of each executable.
        var idle: [String: WorkerProcess] = [:]
        /// Executables whose next worker is being started.
        var starting: Set<String> = []
        /// Set by `drain`: nothing is kept waiting any more.
        var drained = false
    }
    private let workers = Locked(Workers())
    /// Workers ending on their lanes (`WorkerGroup.endOnLane`), by pid, until reaped.
    private let ending = LockedCondition(Set<Int32>())

    /// A worker of `executable` for `plugin`. With `keepOneReady`: the waiting one when it is
    /// still alive, and another is started in the background for next time; without it, a
    /// new one (a host that keeps none ready takes none).
    func take(executable: String, plugin: String, keepOneReady: Bool) throws(WorkerSpawnError) -> WorkerProcess {
        guard keepOneReady else { return try WorkerProcess.spawn(executable: executable, plugin: plugin) }
        let waiting = workers.withLock { $0.idle.removeValue(forKey: executable) }
        startOne(executable)
        if let waiting, waiting.termination == nil { return waiting }
        return try WorkerProcess.spawn(executable: executable, plugin: plugin)
    }

    /// The process id of the worker waiting for `executable`, if one is ready.
    func waitingWorker(of executable: String) -> Int32? { workers.withLock { $0.idle[executable]?.pid } }

    /// Ends every waiting worker and keeps none from now on; one still starting is ended
    /// when it is up. Idempotent.
    func drain() {
        let waiting = workers.withLock { workers in
            workers.drained = true
            defer { workers.idle = [:] }
            return Array(workers.idle.values)
        }
        for worker in waiting { Self.end(worker) }
        waitForEndingWorkers()
    }

    /// Returns once every worker ending in the background is reaped: each within its
    /// unload's, shutdown's and exit's deadlines (5 s), then a kill; their lanes need nothing
    /// of the caller's thread meanwhile.
    func waitForEndingWorkers() {
        ending.wait { pids, _ in pids.isEmpty ? .finish(()) : .wait }
    }

    /// `worker` is ending in the background (its last plugin unloaded while the host runs).
    func stopping(_ worker: WorkerProcess) {
        ending.withLock { _ = $0.insert(worker.pid) }
    }

    /// `worker`, ending in the background, is reaped.
    func stopped(_ worker: WorkerProcess) {
        ending.withLock { _ = $0.remove(worker.pid) }
        ending.broadcast()
    }

    private func startOne(_ executable: String) {
        let start = workers.withLock { !$0.drained && $0.idle[executable] == nil && $0.starting.insert(executable).inserted }
        guard start else { return }
        DispatchQueue.global(qos: .utility).async {
            let worker = try? WorkerProcess.spawn(executable: executable, plugin: "a waiting worker")
            let kept = self.workers.withLock { workers in
                workers.starting.remove(executable)
                guard !workers.drained, workers.idle[executable] == nil else { return false }
                workers.idle[executable] = worker
                return true
            }
            if !kept, let worker { Self.end(worker) }
        }
    }

    private static func end(_ worker: WorkerProcess) {
        worker.kill()
        _ = worker.waitForExit()
    }
}
