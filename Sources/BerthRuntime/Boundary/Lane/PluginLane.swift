@_spi(Engine) import BerthCore
import Foundation
#if canImport(Glibc)
internal import Glibc
#endif

/// The thread one plugin's code is called from while the host goes on: the host never
/// waits for a plugin; a plugin may wait for the host (Docs/architecture.md, "Threading").
///
/// A lane runs one job at a time, in the order they were given, on a thread of its own
/// (one per worker group, one per in-process plugin). The main actor hands a call to its
/// lane with `run` and awaits the result, free meanwhile for every other screen, front
/// end and command. What the plugin asks of the host during the call (state, navigation,
/// resolve, log) comes back to the main actor through `LaneHop`, and the lane waits for
/// the answer: a plugin may wait for the host, never the other way round.
///
/// A thread of its own, not one of Swift concurrency's pool: a job blocks its thread for as
/// long as the plugin takes (a worker's reply, an in-process action), and a blocked job
/// would hold one of the pool's few threads. The lane is a serial executor, so an awaiting
/// caller's task hops onto this thread and back to its actor (`run`).
final class PluginLane: SerialExecutor, Sendable {
    /// Who the lane runs for (`com.example.counter`, `group 'greeter-family'`).
    let name: String

    private struct Queue {
        var jobs: [@Sendable () -> Void] = []
        var started = false
        var ended = false
        /// A job is running on the thread now.
        var running = false
    }
    private let queue = LockedCondition(Queue())

    init(name: String) {
        self.name = name
        isolation = LaneIsolation(lane: self)
    }

    /// Runs `job` on the lane after the jobs given before it; the caller is suspended, not
    /// blocked, until it returns. The calling task hops to the lane (an executor: the
    /// lane's thread runs its job) and from there straight back to its actor, the main
    /// actor, as an actor call does: nothing passes through Swift's global executor on the
    /// way, as a continuation's resume would (one thread's wake less per call). `caller`
    /// keeps this function on the caller's actor up to the hop (a plain `async` function
    /// would start on the global executor).
    func run<T: Sendable>(isolation caller: isolated (any Actor)? = #isolation, _ job: @escaping @Sendable () -> T) async -> T {
        await isolation.call { [self] in
            let result = job()
            // Idle before the caller resumes: its next call finds the lane so.
            queue.withLock { $0.running = false }
            return result
        }
    }

    /// The actor whose executor is this lane: `run` is a call to it. Set once, in `init`.
    nonisolated(unsafe) private var isolation: LaneIsolation!

    /// Runs `job` on the lane after the jobs given before it; nothing waits for it.
    func post(_ job: @escaping @Sendable () -> Void) {
        enqueue(job)
    }

    /// Nothing runs on the lane and nothing waits to: a call begun now from another thread
    /// (a worker's request sent ahead) meets no job of the lane's on the way.
    var isIdle: Bool {
        queue.withLock { !$0.running && $0.jobs.isEmpty }
    }

    /// Ends the lane's thread once the jobs given so far have run.
    func end() {
        queue.withLock { $0.ended = true }
        queue.broadcast()
    }

    /// The lane whose thread this is, if any (a plugin's call back into the host must then
    /// hop to the main actor).
    static var current: PluginLane? {
        guard let lane = pthread_getspecific(laneKey) else { return nil }
        return Unmanaged<PluginLane>.fromOpaque(lane).takeUnretainedValue()
    }

    /// A task's job that runs on the lane (see `run`): it takes its turn after the jobs
    /// given before it.
    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        enqueue { [self] in job.runSynchronously(on: asUnownedSerialExecutor()) }
    }

    // MARK: One stack across two threads

    /// While the lane waits for the main actor's answer to its plugin's call, the main actor
    /// may call into the same plugin (a service factory the resolve needs): that call runs
    /// on the lane, nested, as it would on one stack. While the main actor waits for such a
    /// nested call (or, blocking, for a call the host made on its own, `MainThreadWait`), the
    /// plugin's calls back are answered inline on the main thread.
    private let toLane = LockedCondition([@Sendable () -> Void]())

    /// On the lane's thread: hands `job` to the main actor and runs nested calls until
    /// `answered` says the answer is in. `job` must end by calling `wake()`.
    func waitForMain(_ job: @escaping @Sendable () -> Void, answered: @escaping () -> Bool) {
        MainThreadWait.hand(job, from: self)
        serveNested(until: answered)
    }

    /// On the main actor, during an answer to this lane's plugin: runs `job` on the lane,
    /// nested in the plugin's call, and waits for it, answering its calls back meanwhile.
    func runNested<T: Sendable>(_ job: @escaping @Sendable () -> T) -> T {
        let result = Locked<T?>(nil)
        toLane.withLock { jobs in
            jobs.append { [self] in
                let value = job()
                result.withLock { $0 = value }
                wake()
            }
        }
        toLane.broadcast()
        MainThreadWait.serve(for: self, until: { result.withLock { $0 != nil } })
        return result.withLock { $0! }
    }

    /// Wakes a thread waiting in `waitForMain`, `runNested` or `MainThreadWait.serve`.
    func wake() {
        toLane.broadcast()
        MainThreadWait.wake()
    }

    private func serveNested(until done: () -> Bool) {
        while true {
            let job = toLane.wait { jobs, _ -> LockedCondition<[@Sendable () -> Void]>.Decision<(@Sendable () -> Void)?> in
                if !jobs.isEmpty { return .finish(jobs.removeFirst()) }
                return done() ? .finish(nil) : .wait
            }
            guard let job else { return }
            job()
        }
    }

    private func enqueue(_ job: @escaping @Sendable () -> Void) {
        let start = queue.withLock { state -> Bool in
            state.jobs.append(job)
            defer { state.started = true }
            return !state.started
        }
        if start { startThread() } else { queue.signal() }
    }

    private func startThread() {
        let thread = Thread { [self] in serve() }
        thread.name = "berth.lane \(name)"
        // Plugin code runs here: a Swift plugin's deep render recursion needs the room a
        // main thread has.
        thread.stackSize = 8 << 20
        thread.start()
    }

    private func serve() {
        pthread_setspecific(Self.laneKey, Unmanaged.passUnretained(self).toOpaque())
        while true {
            let job = queue.wait { state, _ -> LockedCondition<Queue>.Decision<(@Sendable () -> Void)?> in
                state.running = false
                if !state.jobs.isEmpty {
                    state.running = true
                    return .finish(state.jobs.removeFirst())
                }
                return state.ended ? .finish(nil) : .wait
            }
            guard let job else { return }
            job()
        }
    }

    /// The mark of a lane's thread.
    private static let laneKey: pthread_key_t = {
        var key = pthread_key_t()
        pthread_key_create(&key, nil)
        return key
    }()
}

/// A lane as an actor: calling it runs on the lane's thread (its executor is the lane), and
/// the caller then goes straight back to its own actor.
private actor LaneIsolation {
    /// Its owner (who outlives it).
    unowned let lane: PluginLane
    nonisolated var unownedExecutor: UnownedSerialExecutor { lane.asUnownedSerialExecutor() }

    init(lane: PluginLane) {
        self.lane = lane
    }

    /// How many calls ran on the lane. Isolated state that each call touches, so no
    /// optimizer can find the hop to the lane needless and run `job` where the caller is.
    private var calls = 0

    func call<T: Sendable>(_ job: @Sendable () -> T) -> T {
        calls &+= 1
        return job()
    }
}

/// The main thread's side of `PluginLane.waitForMain`: a plugin's call back into the host,
/// waiting for the main actor's answer. The answer runs as a job of the main actor, or,
/// while the main thread waits blocking for that lane (`serve`: a nested call, or a call
/// the host made on its own that a synchronous caller waits for), inline in that wait.
/// Another lane's calls wait for the main actor as usual (a contract call from the lane
/// waited for to another lane ends at its timeout).
enum MainThreadWait {
    private struct Handed {
        let lane: ObjectIdentifier
        let job: @Sendable () -> Void
    }
    private struct State {
        /// The lanes the main thread waits for, blocking, and how many times (waits nest).
        var waitingFor: [ObjectIdentifier: Int] = [:]
        var jobs: [Handed] = []

        mutating func take(for lane: ObjectIdentifier) -> Handed? {
            guard let index = jobs.firstIndex(where: { $0.lane == lane }) else { return nil }
            return jobs.remove(at: index)
        }
    }
    private static let state = LockedCondition(State())

    /// On `lane`'s thread: `job` runs on the main thread, in a wait for the lane or as a
    /// main-actor job.
    static func hand(_ job: @escaping @Sendable () -> Void, from lane: PluginLane) {
        let id = ObjectIdentifier(lane)
        let mainWaits = state.withLock { state -> Bool in
            state.jobs.append(Handed(lane: id, job: job))
            return state.waitingFor[id] != nil
        }
        if mainWaits {
            state.broadcast()
        } else {
            Task { @MainActor in runHandedJobs() }
        }
    }

    /// On the main thread: waits for `lane` until `done` (or `deadline`), answering its
    /// plugin's calls back meanwhile.
    static func serve(for lane: PluginLane, until done: () -> Bool, deadline: ContinuousClock.Instant? = nil) {
        let id = ObjectIdentifier(lane)
        state.withLock { $0.waitingFor[id, default: 0] += 1 }
        while true {
            let job = state.wait { state, _ -> LockedCondition<State>.Decision<Handed?> in
                if let job = state.take(for: id) { return .finish(job) }
                if done() { return .finish(nil) }
                guard let deadline else { return .wait }
                return ContinuousClock.now >= deadline ? .finish(nil) : .waitUntil(deadline)
            }
            guard let job else { break }
            job.job()
        }
        // A job handed as the wait ended was not run in it: the main actor runs it.
        let left = state.withLock { state -> Bool in
            state.waitingFor[id]! -= 1
            guard state.waitingFor[id] == 0 else { return false }
            state.waitingFor[id] = nil
            return state.jobs.contains { $0.lane == id }
        }
        if left { Task { @MainActor in runHandedJobs() } }
    }

    /// True while the main thread waits, blocking, for a lane; for tests (read from another
    /// thread: the main one is in the wait).
    static var isWaiting: Bool { state.withLock { !$0.waitingFor.isEmpty } }

    /// Wakes the main thread's wait to look again.
    static func wake() {
        state.broadcast()
    }

    /// The jobs handed so far (none when a wait ran them first).
    @MainActor private static func runHandedJobs() {
        while let handed = state.withLock({ $0.jobs.isEmpty ? nil : $0.jobs.removeFirst() }) {
            handed.job()
        }
    }
}
