@_spi(Engine) import BerthCore
import Foundation
import Logging

/// One `berth-worker` process and the plugin generations it hosts: one plugin's alone, or
/// the members of a manifest group (`"isolation": {"group": NAME}`), which share it and so
/// share services. Owns the channel, its watch while the host is not calling, and the
/// worker's failure, which is every member's.
@MainActor
final class WorkerGroup {
    /// The manifests' group name; nil for a plugin's own worker.
    let name: String?
    /// Where its services' instances live (one place for every member).
    let place: ServicePlace
    let worker: WorkerProcess
    let router: IsolatedCallRouter
    /// The worker's lane: the host's calls that must not hold the main actor run there, one
    /// at a time; while one runs, every member's screens are busy (they share the process).
    let lane: LaneState
    /// Calls whose request went out from the main actor, before the lane woke; for tests.
    private(set) var callsSentAhead = 0
    /// The watcher saw the channel readable while the lane was driving it: served once free.
    private var servePending = false
    /// Set once the worker died or was killed: every later call fails at once.
    private(set) var failure: WorkerFailure?
    /// Set once the last member left and the worker was stopped.
    private(set) var isEnded = false
    private var watch: ChannelWatcher.Token?
    /// The watcher thread's hand-overs to the main actor; cancelled when watching stops.
    private nonisolated let hops = MainActorHops()
    /// Members by number (the hello's `member`), weakly: a generation owns its group.
    private var members: [UInt64: Weak] = [:]
    private var lastMember: UInt64 = 0
    /// The folders its sandbox was made for, by path, with the inode each had then:
    /// Landlock holds the folder itself, so one removed and made again is outside it.
    private var confinedFolders: [String: UInt64] = [:]

    private struct Weak {
        weak var plugin: IsolatedPlugin?
    }

    init(name: String?, worker: WorkerProcess, unresponsive: Duration, logger: Logger) {
        self.name = name
        self.worker = worker
        place = .newWorker(group: name)
        router = IsolatedCallRouter(logger: logger, group: name)
        lane = LaneState(name: name.map { "group '\($0)'" } ?? "worker \(worker.pid)")
        worker.channel.handler = router
        worker.channel.replyTimeout = unresponsive
        // A host that lets a worker stay silent this long lets one call take as long, so a
        // call that waits for the main actor (a contract call's resolve) is not cut at 30 s.
        if unresponsive > CallBudget.worker.maximumDuration {
            worker.channel.callBudget = CallBudget(maximumNestedRequests: CallBudget.worker.maximumNestedRequests, maximumDuration: unresponsive)
        }
        startWatching()
        // A closing job drives the channel from the lane: the watcher lets go meanwhile.
        lane.closingHooks = (begin: { [unowned self] in pauseWatching() }, end: { [unowned self] in
            if let failed = failedOnLane.withLock({ $0 }) { fail(failed) }
            resumeWatching()
        })
    }

    deinit {
        // A group dropped without `leave` stops being watched before its worker's channel closes.
        if let watch { ChannelWatcher.shared.stop(watch) }
    }

    /// How many calls the host has made to the worker (each one round trip).
    var callsMade: UInt64 { worker.channel.callsMade }

    /// Instances of this worker whose scope ended off the main actor (an embedding app that
    /// ends a session from another thread): released before the next call into the worker,
    /// which so never answers a resolve with one of them (`WorkerServices` remembers
    /// answers), or by a main-actor job if no call comes first.
    nonisolated let endedOffMain = Locked<[UInt64]>([])

    /// Cleared when the group moves to a new worker: the members here stay until they end.
    private var takesMembers = true

    /// Whether a new member may join: alive, not yet ended, and not replaced.
    var isOpen: Bool { failure == nil && !isEnded && takesMembers }

    /// No new member joins this worker (its group moves to a new one); those it has go on
    /// until they end, and the last one out stops it.
    func closeToNewMembers() {
        takesMembers = false
    }

    /// Records the folders of the sandbox the worker enters at its first hello.
    func confine(to policy: SandboxPolicy?) {
        for path in policy?.readPaths ?? [] { confinedFolders[path] = Self.inode(of: path) }
    }

    /// Whether `folder` is the very folder the worker's sandbox admits (not one made again
    /// at the same path since).
    func admits(_ folder: String) -> Bool {
        guard let inode = confinedFolders[folder] else { return false }
        return inode != 0 && inode == Self.inode(of: folder)
    }

    private static func inode(of path: String) -> UInt64 {
        var info = stat()
        return stat(path, &info) == 0 ? UInt64(info.st_ino) : 0
    }

    /// A number for a generation about to say hello; it is a member from now on (a crash
    /// during its hello is reported to it once it is attached).
    func takeMember() -> UInt64 {
        lastMember += 1
        return lastMember
    }

    /// Attaches the loaded generation: it hears of the worker's failure.
    func attach(_ plugin: IsolatedPlugin, as member: UInt64) {
        members[member] = Weak(plugin: plugin)
    }

    /// The generation `member` is gone (ended, or its load failed); the last one out stops
    /// the worker. Returns whether the worker was stopped.
    @discardableResult
    func leave(_ member: UInt64) -> Bool {
        members[member] = nil
        router.remove(member: member)
        guard members.isEmpty, !isEnded else { return false }
        markEnded()
        lane.end()
        Self.end(worker, healthy: failure == nil, unloading: nil)
        return true
    }

    /// Ends `member` when it is the last one, without the main actor waiting: its unload
    /// (when the worker is healthy), the worker's shutdown and its exit (a kill when it does
    /// not exit) run as the lane's last job, serving nothing that needs the main actor
    /// meanwhile (`WorkerEndingHandler`); `stops` counts it until the worker is reaped (the
    /// host's exit waits for it). False, doing nothing, when other members stay or a call
    /// runs on the lane (the caller then ends it as before).
    func endOnLane(lastMember member: UInt64, stops: WorkerPool) -> Bool {
        guard members.count == 1, members[member] != nil, !isEnded, lane.busy == nil else { return false }
        members[member] = nil
        markEnded()
        let (worker, healthy) = (worker, failure == nil)
        // The channel holds its handler weakly: the job keeps this one.
        let ending = WorkerEndingHandler(plugin: router.pluginID(of: member), log: router.log(of: member))
        worker.channel.handler = ending
        router.remove(member: member)
        stops.stopping(worker)
        lane.lane.post {
            defer { withExtendedLifetime(ending) {} }
            Self.end(worker, healthy: healthy, unloading: member)
            stops.stopped(worker)
        }
        lane.end()
        return true
    }

    /// No member is left: the group takes no more calls and its worker is no longer watched.
    private func markEnded() {
        isEnded = true
        stopWatching()
    }

    /// A healthy worker unloads `member` (when given) and shuts down; then it is stopped
    /// (killed when it does not exit).
    private nonisolated static func end(_ worker: WorkerProcess, healthy: Bool, unloading member: UInt64?) {
        if healthy {
            if let member { _ = try? worker.channel.call(.unload(plugin: member), timeout: .seconds(2)) }
            _ = try? worker.channel.call(.shutdown, timeout: .seconds(1))
        }
        stop(worker)
    }

    /// The first failure a call on the lane met, as soon as it met it (its end on the main
    /// actor, which records it, may come after a blocking call that went on past it).
    private let failedOnLane = Locked<ChannelError?>(nil)

    /// One round trip; a dead or unresponsive worker fails the whole group.
    func call(_ request: IsolationRequest, timeout: Duration? = nil) throws(ChannelError) -> IsolationReply {
        // A task's post on the lane returns first: this call uses the channel itself. Its
        // callers waited for the post already (the synchronous API) or were refused as busy
        // (the host's own paths), so this only guards the channel. A failure the post met
        // is recorded now (its end on the main actor comes later).
        lane.waitForHostCall()
        if let failed = failedOnLane.withLock({ $0 }) {
            fail(failed)
            throw failed
        }
        if endedOffMain.withLock({ !$0.isEmpty }) { releaseEndedOffMain() }
        // The worker's requests during this call act only for the member it runs.
        router.enter(request)
        defer { router.leave() }
        do {
            // Part of the answer to the worker's own call: it runs on the lane, nested there.
            if lane.busy != nil, lane.isNested {
                let channel = worker.channel
                return try lane.lane.runNested { () -> Result<IsolationReply, ChannelError> in
                    do throws(ChannelError) {
                        if let timeout { return .success(try channel.call(request, timeout: timeout)) }
                        return .success(try channel.call(request))
                    } catch {
                        return .failure(error)
                    }
                }.get()
            }
            pauseWatching()
            let reply = if let timeout { try worker.channel.call(request, timeout: timeout) } else { try worker.channel.call(request) }
            // As after a call on the lane (a failed call stops the watching instead).
            resumeWatching()
            return reply
        } catch {
            fail(error)
            throw error
        }
    }

    /// One round trip on the worker's lane: the main actor is free until the reply, and the
    /// worker's calls back into the host are answered there meanwhile (`LaneHop`).
    func callOnLane(_ request: IsolationRequest, as call: RunningPluginCall.Call, in context: LaneCallContext) async throws(ChannelError) -> IsolationReply {
        try await callOnLane(request, as: call, in: context) { $0 }
    }

    /// `callOnLane`, with `then` run on the lane on the reply before the main actor sees it
    /// (a render's decode and limit checks), and `returned` on the main actor before the
    /// work that waited for the lane runs.
    func callOnLane<T: Sendable>(_ request: IsolationRequest, as call: RunningPluginCall.Call, in context: LaneCallContext,
                                 then: @escaping @Sendable (IsolationReply) -> T,
                                 returned: (T) -> Void = { _ in }) async throws(ChannelError) -> T {
        try await callOnLane(request, as: call, in: context, timeout: nil, then: then, returned: returned)
    }

    /// `callOnLane` with a reply deadline of its own (a `hello`: the worker's start too).
    func callOnLane<T: Sendable>(_ request: IsolationRequest, as call: RunningPluginCall.Call, in context: LaneCallContext,
                                 timeout: Duration?, then: @escaping @Sendable (IsolationReply) -> T,
                                 returned: (T) -> Void = { _ in }) async throws(ChannelError) -> T {
        if endedOffMain.withLock({ !$0.isEmpty }) { releaseEndedOffMain() }
        // The worker's requests during this call act only for the member it runs.
        router.enter(request)
        defer { router.leave() }
        let channel = worker.channel
        pauseWatching()
        // The request goes out from here when it can (the worker starts while the lane wakes);
        // the lane waits for the reply.
        let prepared = lane.isIdle ? channel.prepare(request) : nil
        if prepared?.sent == true { callsSentAhead += 1 }
        let failedOnLane = failedOnLane
        let result = await lane.run(call, in: context, { () -> Result<T, ChannelError> in
            do throws(ChannelError) {
                let reply = try channel.call(request, prepared: prepared, timeout: timeout)
                return .success(then(reply))
            } catch {
                failedOnLane.withLock { if $0 == nil { $0 = error } }
                return .failure(error)
            }
        }, returned: { [self] result in
            switch result {
            case .failure(let error): fail(error)
            case .success(let value): returned(value)
            }
            resumeWatching()
        })
        return try result.get()
    }

    /// A closed screen's request on the lane (`LaneState.close`): the main actor goes on.
    /// `finished` gets the plugin's failure on the main actor. Once the channel failed (the
    /// worker died or hung) the rest go quietly: the worker's end is reported, and closes
    /// its plugins' screens, when the job ends (`closingHooks`).
    func closeOnLane(_ request: IsolationRequest, as running: RunningPluginCall.Call, finished: @escaping (String?) -> Void) {
        let (channel, failedOnLane) = (worker.channel, failedOnLane)
        lane.close(as: running, {
            guard failedOnLane.withLock({ $0 == nil }) else { return nil }
            do throws(ChannelError) {
                let reply = try channel.call(request, prepared: nil, timeout: nil)
                return reply.status.isOK ? nil : reply.status.message
            } catch {
                failedOnLane.withLock { if $0 == nil { $0 = error } }
                return nil
            }
        }, finished: finished)
    }

    /// Releases in the worker the instances whose scope ended off the main actor.
    func releaseEndedOffMain() {
        let instances = endedOffMain.withLock { ended in
            defer { ended = [] }
            return ended
        }
        guard failure == nil, !isEnded else { return }
        for instance in instances { _ = try? call(.serviceRelease(instance: instance)) }
    }

    /// Records the worker's end (killing it if it only stopped answering) and tells every
    /// member once, each with its own plugin named.
    @discardableResult
    func fail(_ error: ChannelError) -> WorkerFailure {
        if let failure { return failure }
        let failure = WorkerFailure(plugin: name.map { "group '\($0)'" } ?? "a plugin", worker: worker, channelError: error,
                                    images: memberImages)
        self.failure = failure
        stopWatching()
        for member in members.values { member.plugin?.workerFailed(failure) }
        return failure
    }

    /// The libraries its members loaded (a crash's fatal line is located in them).
    var memberImages: [String] { members.values.compactMap { $0.plugin?.imagePath } }

    // MARK: Between calls

    /// Watches the channel while the host is not calling: notifications (logs, task posts)
    /// are served on the main actor, and a worker that dies between calls is noticed.
    private func startWatching() {
        watch = ChannelWatcher.shared.watch(worker.channel.fileDescriptor) { [weak self] in
            self?.hops.post { [weak self] in self?.serveWhileIdle() }
        }
    }

    /// The lane or the main actor is about to read the channel for a call's reply: the
    /// watcher need not wake for it.
    private func pauseWatching() {
        if let watch { ChannelWatcher.shared.pause(watch) }
    }

    /// The call is over: what the watcher saw during it is served, and the channel watched
    /// again (what arrived after the reply is reported at once).
    private func resumeWatching() {
        if servePending {
            servePending = false
            serveWhileIdle()
        } else if let watch, failure == nil {
            ChannelWatcher.shared.rearm(watch)
        }
    }

    private func serveWhileIdle() {
        guard let watch, failure == nil else { return }
        // The lane is reading the channel: what arrived is served there, and once it is free.
        guard lane.busy == nil else {
            servePending = true
            return
        }
        do throws(ChannelError) {
            try worker.channel.serveAvailable()
            ChannelWatcher.shared.rearm(watch)
        } catch {
            fail(error)
        }
    }

    private func stopWatching() {
        guard let watch else { return }
        self.watch = nil
        ChannelWatcher.shared.stop(watch)
        hops.cancelAll()
    }

    nonisolated static func stop(_ worker: WorkerProcess) {
        worker.channel.close()
        if worker.waitForExit(timeout: .seconds(2)) == nil {
            _ = worker.kill()
            _ = worker.waitForExit()
        }
    }
}

/// The host's live worker groups by name, so a member that loads joins its group's worker.
@MainActor
final class WorkerGroups {
    private var groups: [String: WorkerGroup] = [:]

    init() {}

    /// The group's worker, when it is alive and still has members.
    func open(_ name: String) -> WorkerGroup? {
        guard let group = groups[name], group.isOpen else { return nil }
        return group
    }

    func add(_ group: WorkerGroup) {
        guard let name = group.name else { return }
        groups[name] = group
    }
}
