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
    /// How many calls it has run; for tests.
    private(set) var callsRun = 0

    init(name: String) {
        lane = PluginLane(name: name)
    }

    /// Free, with no job of the lane's own running or queued (see `PluginLane.isIdle`).
    var isIdle: Bool { busy == nil && lane.isIdle }

    /// Whether a call may go to the plugin now, from the main thread: the lane is free, or
    /// its call is waiting for the main actor's answer to the plugin, which this call is
    /// part of (it nests). A call the host made on its own (`byHost`, a task's post) is
    /// waited for first, blocking: the caller is synchronous, and wants its answer now.
    var isAvailable: Bool {
        waitForHostCall()
        return busy == nil || isNested || hostCallReturned
    }

    /// The call running on the lane, once a call the host made on its own has been waited
    /// for (`waitForHostCall`), nested or not: what an unload or reload is refused for.
    var callInTheWay: RunningPluginCall.Call? {
        waitForHostCall()
        return hostCallReturned ? nil : busy
    }

    /// Set while a call the host made on its own runs: true once its job has returned on
    /// the lane (a synchronous caller may go on; the call's end on the main actor follows).
    private var hostCallDone: Locked<Bool>?

    private var hostCallReturned: Bool { busy?.byHost == true && hostCallDone?.withLock({ $0 }) == true }

    /// Blocks the main thread until the call the host made on its own has returned on the
    /// lane, answering the plugin's calls back meanwhile, for `hostCallWait` at most (an
    /// in-process plugin that never returns keeps its lane: the call then counts as busy).
    /// Not while the main actor answers a lane's plugin: that lane waits for it.
    func waitForHostCall() {
        guard let busy, busy.byHost, !isNested, LaneHop.answering == nil, let done = hostCallDone else { return }
        MainThreadWait.serve(for: lane, until: { done.withLock { $0 } }, deadline: .now + Self.hostCallWait)
    }

    /// How long a synchronous caller waits for a call the host made on its own: the default
    /// `--unresponsive-ms`.
    static let hostCallWait: Duration = .seconds(3)

    /// People's calls waiting for a call the host made on its own to end (`hostCallsEnded`).
    private var waitingPeople: [CheckedContinuation<Void, Never>] = []
    /// Set when such a call ended with people waiting: the lane is theirs until their tasks
    /// have run (one begins its call, or none does), so a task's post that waited does not
    /// take it first.
    private var reservedForPeople = false

    /// No call runs on the lane and none is about to: a call the host makes on its own may
    /// begin now (else it goes after the call, `afterCall`).
    var isFreeForHostCall: Bool { busy == nil && !reservedForPeople }

    /// For a person's call, which waits for a call the host made on its own rather than
    /// being refused: returns once the lane is free of such calls (it may be in a person's
    /// call then, which refuses this one as busy). The person goes before the posts that
    /// waited with it.
    func hostCallsEnded() async {
        while let busy, busy.byHost, !isNested {
            await withCheckedContinuation { (person: CheckedContinuation<Void, Never>) in waitingPeople.append(person) }
        }
    }

    /// True while the main actor answers this lane's plugin (a call now nests in its call).
    var isNested: Bool { LaneHop.answering === lane }

    /// Runs `work` now when the lane is available, else once its call has returned.
    func whenFree(_ work: @escaping () -> Void) {
        if isAvailable { work() } else { afterFree.append(work) }
    }

    /// Runs `work` now when the lane is in no call, else once its call has ended on the
    /// main actor (after the work given before it): a call the host made on its own is
    /// not waited for, blocking, as `whenFree` does.
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
        returned()
        guard waitingPeople.isEmpty else {
            let people = waitingPeople
            waitingPeople = []
            reservedForPeople = true
            for person in people { person.resume() }
            // After their tasks (queued first on the main actor): what waited runs, unless one
            // of them began a call (its end runs it then).
            Task { @MainActor [self] in
                reservedForPeople = false
                runWaitingWork()
            }
            return
        }
        runWaitingWork()
    }

    private func runWaitingWork() {
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

    /// Ends the lane's thread once its work is done.
    func end() {
        lane.end()
    }
}
