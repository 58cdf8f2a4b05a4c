@_spi(Engine) import BerthCore
/// A lane as the main actor keeps it: the call it runs now (its screens are busy until it
/// returns) and the work that must wait until it is free (a screen closed while busy has its
/// close sequence run after the call, in order).
@MainActor
final class LaneState {
    let lane: PluginLane
    /// The call running on the lane now; nil when it is free.
    private(set) var busy: RunningPluginCall.Call?
    private var afterFree: [() -> Void] = []
    /// What `whenFree` deferred (a closed screen's close sequence) and closing calls that
    /// came while the lane was in another call (`close`), in order: it runs as soon as the
    /// call ends, before anyone waiting for the lane goes on (an unload among them, which
    /// must not end the image beneath it).
    private var closeWork: [Deferred] = []

    private enum Deferred {
        /// Work on the main actor.
        case work(() -> Void)
        /// Closing calls, for one closing job on the lane.
        case calls([QueuedClosingCall])
    }
    /// How many calls it has run; for tests.
    private(set) var callsRun = 0
    /// The closing job's calls (`close`): it runs them in order, including those given to
    /// it while it runs, until it finds none left (`running` is false from then).
    /// `done`: each run call's number and failure, for the main actor.
    private let closing = Locked<ClosingCalls>(ClosingCalls())
    /// What each closing call's caller hears once it has run, by number.
    private var closingFinished: [Int: (String?) -> Void] = [:]
    private var closingCallsQueued = 0
    /// What starts and ends with a closing job besides the lane (a worker's channel watch).
    var closingHooks: (begin: () -> Void, end: () -> Void)?

    init(name: String) {
        lane = PluginLane(name: name)
    }

    /// Free, with no job of the lane's own running or queued (see `PluginLane.isIdle`).
    var isIdle: Bool { busy == nil && lane.isIdle }

    /// The call that refuses a call from the main thread now, without waiting: nil when the
    /// lane is free, when its call waits for the main actor's answer to the plugin (a call
    /// now nests in it), or when a call the host made on its own has returned on the lane.
    /// A task's post still running counts as busy: only the synchronous API waits for one
    /// (`waitForHostCall`); the host's own paths (a close, a join, a usage read) never do.
    var refusingCall: RunningPluginCall.Call? {
        busy == nil || isNested || hostCallReturned ? nil : busy
    }

    /// The call running on the lane, nested or not, unless a call the host made on its own
    /// has returned: what an unload or reload is refused for. It does not wait.
    var callInTheWay: RunningPluginCall.Call? {
        hostCallReturned && closeWork.isEmpty ? nil : busy
    }

    /// Set while a call the host made on its own runs: true once its job has returned on
    /// the lane (a synchronous caller may go on; the call's end on the main actor follows).
    private var hostCallDone: Locked<Bool>?

    private var hostCallReturned: Bool { busy?.byHost == true && hostCallDone?.withLock({ $0 }) == true }

    /// The synchronous API's wait, and only its: blocks the main thread until the call the
    /// host made on its own has returned on the lane, answering the plugin's calls back
    /// meanwhile, for `hostCallWait` at most (an in-process plugin that never returns keeps
    /// its lane: the call then counts as busy). Its caller asked for an answer now and
    /// blocks anyway. Not while the main actor answers a lane's plugin: that lane waits.
    func waitForHostCall() {
        guard let busy, busy.byHost, !isNested, LaneHop.answering == nil, let done = hostCallDone else { return }
        MainThreadWait.serve(for: lane, until: { done.withLock { $0 } }, deadline: .now + Self.hostCallWait)
    }

    /// How long a synchronous caller waits for a call the host made on its own: the default
    /// `--unresponsive-ms`.
    static let hostCallWait: Duration = .seconds(3)

    /// People's calls waiting for a call the host made on its own to end (`hostCallsEnded`).
    private var waitingPeople: [CheckedContinuation<Void, Never>] = []
    /// How many people's calls wait so; for tests.
    var peopleWaiting: Int { waitingPeople.count }
    /// People such a call's end woke that have not run yet: the lane stays theirs until each
    /// has (it begins its call, or gives up), so a task's post that waited does not take it
    /// first, whatever order the main actor runs the woken tasks in.
    private var wokenPeople = 0

    /// No call runs on the lane and none is about to: a call the host makes on its own may
    /// begin now (else it goes after the call, `afterCall`).
    var isFreeForHostCall: Bool { busy == nil && wokenPeople == 0 }

    /// For a person's call, which waits for a call the host made on its own rather than
    /// being refused: returns once the lane is free of such calls (it may be in a person's
    /// call then, which refuses this one as busy). The person goes before the posts that
    /// waited with it.
    func hostCallsEnded() async {
        while let busy, busy.byHost, !isNested {
            await withCheckedContinuation { (person: CheckedContinuation<Void, Never>) in waitingPeople.append(person) }
            // Here: the caller goes on to its call at once, with no suspension before it
            // begins; what waited for the lane runs after that (or now, if it gives up).
            wokenPeople -= 1
            if wokenPeople == 0 { Task { @MainActor [self] in runWaitingWork() } }
        }
    }

    /// True while the main actor answers this lane's plugin (a call now nests in its call).
    var isNested: Bool { LaneHop.answering === lane }

    /// Runs `work` now when no call refuses it (`refusingCall`), else once its call has
    /// returned; it never waits, a task's post included.
    func whenFree(_ work: @escaping () -> Void) {
        if refusingCall == nil, closeWork.isEmpty { work() } else { closeWork.append(.work(work)) }
    }

    /// Runs `work` now when the lane is in no call, else once its call has ended on the
    /// main actor (after the work given before it), a returned post's end included.
    func afterCall(_ work: @escaping () -> Void) {
        if isFreeForHostCall { work() } else { afterFree.append(work) }
    }

    /// Runs `job` on the lane as `call`, in `context`; the lane is busy until it returns.
    /// `returned` sees the result first (a failed worker is recorded before the waiting work
    /// runs), then the work that waited for the lane runs, in order.
    func run<T: Sendable>(_ call: RunningPluginCall.Call, in context: LaneCallContext, _ job: @escaping @Sendable () -> T,
                          returned: (T) -> Void = { _ in }) async -> T {
        precondition(busy == nil, "a lane runs one call at a time: \(lane.name) is in \(busy?.description ?? "")")
        let token = began(call)
        let result: T
        if call.byHost {
            let done = Locked(false)
            hostCallDone = done
            result = await lane.run { [lane] in
                let result = context.during(job)
                done.withLock { $0 = true }
                lane.wake()
                return result
            }
        } else {
            result = await lane.run { context.during(job) }
        }
        ended(token) { returned(result) }
        return result
    }

    private func began(_ call: RunningPluginCall.Call) -> UInt64 {
        busy = call
        callsRun += 1
        return RunningPluginCall.laneBegan(call)
    }

    /// The call is over: `returned` sees it first, then the work that waited runs, in order.
    private func ended(_ token: UInt64, returned: () -> Void) {
        RunningPluginCall.laneEnded(token)
        busy = nil
        hostCallDone = nil
        // Reserved before `returned`: a worker's post served there (the watcher resumes)
        // waits behind the people too.
        let people = waitingPeople
        waitingPeople = []
        wokenPeople += people.count
        returned()
        runCloseWork()
        guard people.isEmpty else {
            // What waited runs once they have run (`hostCallsEnded`).
            for person in people { person.resume() }
            return
        }
        runWaitingWork()
    }

    private func runCloseWork() {
        while busy == nil, !closeWork.isEmpty {
            switch closeWork.removeFirst() {
            case .work(let work): work()
            case .calls(let calls): startClosing(calls)
            }
        }
    }

    private func runWaitingWork() {
        runCloseWork()
        while busy == nil, !afterFree.isEmpty {
            afterFree.removeFirst()()
        }
    }

    /// Runs `job` on the lane as `call` once the lane is free (after the call it runs now and
    /// the work waiting before it). `answered` gets the result on the lane's thread as soon
    /// as the job returns (a waiting consumer need not wait for the main actor), `returned`
    /// on the main actor after it, before the lane is free again. The main actor never
    /// waits. A contract call (`ContractCalls`) comes this way: the provider's screens are
    /// busy while it runs.
    func runWhenFree<T: Sendable>(_ call: RunningPluginCall.Call, _ job: @escaping @Sendable () -> T,
                                  answered: @escaping @Sendable (T) -> Void, returned: @escaping @MainActor (T) -> Void) {
        guard busy == nil else {
            afterFree.append { [self] in runWhenFree(call, job, answered: answered, returned: returned) }
            return
        }
        let token = began(call)
        let context = LaneCallContext(screen: nil, request: nil, held: HeldRequests())
        lane.post { [self] in
            let result = context.during(job)
            // Handed to the main actor before the answer: what the caller does next on the
            // main actor (a reload of the provider) finds the lane free and the failure seen.
            Task { @MainActor [self] in ended(token) { returned(result) } }
            answered(result)
        }
    }

    // MARK: A closed screen's calls

    /// Runs `call` (a closed screen's `deactivate`, lifecycle event or `destroy`) on the lane
    /// after what runs or waits there now, in the order queued; the main actor goes on. One
    /// job runs the closing calls queued together, and those given to it while it runs, as
    /// a call the host made on its own (`running` describes it): a person's call waits for
    /// it, a synchronous call waits for it a while (`waitForHostCall`). When the lane is
    /// free it starts now, ahead of people just woken (who wait for it, as for a post).
    /// `finished` gets the call's failure on the main actor.
    func close(as running: RunningPluginCall.Call, _ call: @escaping @Sendable () -> String?, finished: @escaping (String?) -> Void) {
        let queued = QueuedClosingCall(number: closingCallsQueued, running: running, run: call)
        closingCallsQueued += 1
        closingFinished[queued.number] = finished
        if busy == nil, closeWork.isEmpty {
            startClosing([queued])
            return
        }
        // The running job takes it, unless the main actor has work queued behind that job.
        if closeWork.isEmpty, busy?.closes == true, closing.withLock({ calls in
            guard calls.running else { return false }
            calls.queued.append(queued)
            return true
        }) {
            return
        }
        if case .calls(let calls) = closeWork.last {
            closeWork[closeWork.count - 1] = .calls(calls + [queued])
        } else {
            closeWork.append(.calls([queued]))
        }
    }

    private func startClosing(_ first: [QueuedClosingCall]) {
        closing.withLock { calls in
            calls.queued = first
            calls.running = true
        }
        closingHooks?.begin()
        let calls = closing
        let context = LaneCallContext(screen: nil, request: nil, held: HeldRequests())
        Task.immediate { @MainActor [self] in
            let call = first[0].running
            // As `status` shows it: the first closed screen's, since the job began.
            await run(RunningPluginCall.Call(plugin: call.plugin, route: call.route, screen: call.screen, function: call.function,
                                             byHost: true, closes: true), in: context, {
                while let next = calls.withLock({ calls -> QueuedClosingCall? in
                    guard !calls.queued.isEmpty else {
                        calls.running = false
                        return nil
                    }
                    return calls.queued.removeFirst()
                }) {
                    let failure = next.run()
                    calls.withLock { $0.done.append((next.number, failure)) }
                }
            }, returned: { [self] _ in
                closingHooks?.end()
                for (number, failure) in calls.withLock({ calls in
                    defer { calls.done = [] }
                    return calls.done
                }) {
                    closingFinished.removeValue(forKey: number)?(failure)
                }
            })
        }
    }

    /// Ends the lane's thread once its work is done.
    func end() {
        lane.end()
    }
}

/// The closing calls queued for a lane, and those run, as the main actor and the lane share them.
private struct ClosingCalls: Sendable {
    var queued: [QueuedClosingCall] = []
    var done: [(Int, String?)] = []
    var running = false
}

private struct QueuedClosingCall: Sendable {
    let number: Int
    let running: RunningPluginCall.Call
    let run: @Sendable () -> String?
}
