@_spi(Engine) import BerthCore
import Foundation
import Logging
internal import CBerth

/// The isolated side of the seam: one plugin generation served by a `berth-worker`
/// process over its channel. Every `PluginConnection` call is one request; the plugin's
/// calls back into the host arrive as requests on the same stack and are answered by
/// `HostCallbackHandler.answer`, exactly as in process (`PluginToHost`).
///
/// A worker that dies or does not answer within `unresponsive` is this plugin's problem
/// only: the call fails with a message naming the signal and the worker's last fatal line,
/// and the host is told (`onFailure`) so it can close the plugin's screens at top level.
@MainActor
final class IsolatedPlugin: PluginConnection {
    let pluginID: String
    let handshake: PluginHandshake
    let imagePath: String
    /// In a worker, `dlopen` is starting the worker process and `handshake` its `hello`
    /// round trip (the worker's dlopen, entry call and handshake: the host sees one reply).
    let loadTimings: LoadTimings
    /// The worker's process id.
    let workerPID: Int32
    /// Whether the worker confined itself before it opened the library.
    let sandbox: SandboxStatus
    /// The worker it runs in: its own, or its manifest group's, shared with the others.
    let group: WorkerGroup
    /// Its number in that worker (the hello's `member`).
    private let member: UInt64
    private let runtimeDirectory: RuntimeDirectory
    /// Where its worker came from; it counts the worker while it ends in the background.
    private let workerPool: WorkerPool
    /// Set once the worker died or was killed: every later call fails at once.
    private(set) var failure: WorkerFailure?
    /// Told once, on the main actor, when the worker fails.
    var onFailure: ((WorkerFailure) -> Void)?
    /// The render the worker made with the last action, until the host renders (or any
    /// other call makes it stale).
    private var prerendered: PrerenderedTree<WorkerPrerender>?
    /// How many of the host's renders used a render made with an action (no round trip of
    /// their own); for tests.
    private(set) var rendersTakenFromActions = 0
    var laneCallsRun: Int { group.lane.callsRun }
    /// How many calls the host has made to the worker (each one round trip); for tests.
    var callsMade: UInt64 { group.callsMade }

    /// Joins `groups`' open worker of the manifest's group, or takes a worker from
    /// `workerPool` (a waiting one when `keepWorkerReady`); hands it the shadow copy and
    /// waits for its handshake, on the calling thread (the main actor, which waits).
    convenience init(_ start: WorkerStart, host: (any PluginFacingHost)? = nil) throws(LoaderError) {
        let group: WorkerGroup
        // A synchronous load: a task's post in the open group's worker is waited for, a while.
        start.openGroup?.lane.waitForHostCall()
        if let open = try start.takeOpenGroup() { group = open } else { group = start.newGroup(try start.spawner.spawn()) }
        let joined = start.join(group, host: host)
        let reply: IsolationReply
        do {
            reply = try joined.group.call(.hello(joined.hello), timeout: joined.helloTimeout)
        } catch {
            throw joined.failed(error)
        }
        try self.init(joined, reply: reply)
    }

    /// `init`, with the worker started on a thread of its own and its `hello` on the worker's
    /// lane: the main actor goes on meanwhile, and answers there what the plugin's entry asks
    /// of the host while the lane waits (`LaneHop`).
    static func start(_ start: WorkerStart, host: (any PluginFacingHost)? = nil) async throws(LoaderError) -> IsolatedPlugin {
        let group: WorkerGroup
        // A task's post in the open group's worker is awaited; a person's call refuses.
        if let open = start.openGroup { await open.lane.hostCallsEnded() }
        if let open = try start.takeOpenGroup() {
            group = open
        } else {
            let spawner = start.spawner
            let spawned = await OwnThread.run { () -> Result<WorkerProcess, LoaderError> in
                do throws(LoaderError) { return .success(try spawner.spawn()) } catch { return .failure(error) }
            }
            let worker = try spawned.get()
            // Another member may have opened the group meanwhile: it is joined, as `init` would.
            if let open = start.openGroup { await open.lane.hostCallsEnded() }
            if let open = try start.takeOpenGroup(stoppingUnused: worker) { group = open } else { group = start.newGroup(worker) }
        }
        let joined = start.join(group, host: host)
        let loading = RunningPluginCall.Call.loading(start.plugin.manifest.id, generation: start.generation)
        let context = LaneCallContext(screen: nil, request: nil, held: HeldRequests())
        let reply: IsolationReply
        do {
            reply = try await joined.group.callOnLane(.hello(joined.hello), as: loading, in: context, timeout: joined.helloTimeout, then: { $0 })
        } catch {
            throw joined.failed(error)
        }
        return try IsolatedPlugin(joined, reply: reply)
    }

    /// Takes the `hello`'s reply: the plugin is attached to its worker, or the worker is left.
    private init(_ joined: JoinedWorker, reply: IsolationReply) throws(LoaderError) {
        pluginID = joined.pluginID
        runtimeDirectory = joined.runtimeDirectory
        workerPool = joined.workerPool
        imagePath = joined.hello.libraryPath
        group = joined.group
        member = joined.member
        workerPID = joined.group.worker.pid
        var timings = joined.timings
        timings.handshake = joined.helloSent.elapsed
        loadTimings = timings
        switch reply {
        case .hello(let answer):
            handshake = PluginHandshake(abi: answer.abi, tableSize: Int(answer.tableSize),
                                        functions: answer.functions, tableAddress: UInt(answer.tableAddress))
            sandbox = answer.sandbox
        case .helloFailed(let error):
            joined.abandon()
            throw error
        default:
            joined.abandon()
            throw LoaderError(.workerFailed, plugin: joined.pluginID, detail: "the worker answered hello with \(reply)")
        }
        joined.services.plugin = self
        joined.group.attach(self, as: joined.member)
    }

    /// The least time a worker gets to start and load its plugin.
    static let loadTimeout: Duration = .seconds(10)

    // MARK: Host → plugin

    func create(route: String, argument: [UInt8], screen: ScreenHandle) throws(PluginCallError) -> PluginInstanceID {
        let token = group.router.register(screen, member: member)
        let reply = try call(.create(plugin: member, screen: token, route: route, argument: argument))
        guard case .created(let status, let instance) = reply, status.isOK else {
            group.router.unregister(token)
            throw Self.failure(reply.status)
        }
        group.router.bind(instance: instance, to: token)
        return PluginInstanceID(rawValue: UInt(instance))
    }

    /// While the worker's lane is busy (back on a screen whose action is still running) it
    /// runs once the call has returned, as the rest of the close sequence does.
    func destroy(_ instance: PluginInstanceID) {
        group.lane.whenFree { [self] in
            _ = try? call(.destroy(instance: UInt64(instance.rawValue)))
            group.router.unbind(instance: UInt64(instance.rawValue))
        }
    }

    func activate(_ instance: PluginInstanceID) throws(PluginCallError) {
        try check(.activate(instance: UInt64(instance.rawValue)))
    }

    /// After a crash there is nothing left to deactivate: the close sequence goes on quietly.
    /// While the lane is busy, it waits for the call to return (the screen is already out of
    /// the tree); a failure then is only the plugin's.
    func deactivate(_ instance: PluginInstanceID) throws(PluginCallError) {
        guard failure == nil else { return }
        guard group.lane.refusingCall == nil else {
            group.lane.whenFree { [self] in if failure == nil { _ = try? check(.deactivate(instance: UInt64(instance.rawValue))) } }
            return
        }
        try check(.deactivate(instance: UInt64(instance.rawValue)))
    }

    func screenEvent(_ instance: PluginInstanceID, code: Int32, flag: Bool) {
        group.lane.whenFree { [self] in _ = try? call(.screenEvent(instance: UInt64(instance.rawValue), event: code, flag: flag)) }
    }

    /// After a crash there is nothing left to close: `finished` hears nothing went wrong.
    func closeOnLane(_ call: ClosingCall, of instance: PluginInstanceID, as running: RunningPluginCall.Call,
                     finished: @escaping (String?) -> Void) {
        discardPrerenderedTree()
        guard failure == nil else { return finished(nil) }
        let id = UInt64(instance.rawValue)
        let request: IsolationRequest = switch call {
        case .deactivate: .deactivate(instance: id)
        case .event(let code, let flag): .screenEvent(instance: id, event: code, flag: flag)
        case .destroy: .destroy(instance: id)
        }
        group.closeOnLane(request, as: running) { [group] failure in
            if case .destroy = call { group.router.unbind(instance: id) }
            finished(failure)
        }
    }

    // MARK: On the lane

    var busyCall: RunningPluginCall.Call? { group.lane.busy }
    var refusingCall: RunningPluginCall.Call? { group.lane.refusingCall }
    var callInTheWay: RunningPluginCall.Call? { group.lane.callInTheWay }
    func waitForHostCall() { group.lane.waitForHostCall() }

    func afterCall(_ work: @escaping () -> Void) { group.lane.afterCall(work) }
    var isFreeForHostCall: Bool { group.lane.isFreeForHostCall }

    func hostCallsEnded() async { await group.lane.hostCallsEnded() }
    /// How many people's calls wait in `hostCallsEnded` now; for tests.
    var peopleWaiting: Int { group.lane.peopleWaiting }

    /// An action on the worker's lane: the main actor goes on until the reply. With `state`,
    /// the worker renders right after it, as `action(_:name:payload:renderingAfterwards:)`.
    func actionOnLane(_ instance: PluginInstanceID, name: String, payload: [UInt8], renderingAfterwards state: StateStorage?,
                      as running: RunningPluginCall.Call, in context: LaneCallContext) async throws(PluginCallError) {
        let id = UInt64(instance.rawValue)
        guard let state, handshake.functions.contains(.renderTree) else {
            let reply = try await callOnLane(.action(instance: id, name: name, payload: payload), as: running, in: context)
            guard reply.status.isOK else { throw Self.failure(reply.status) }
            return
        }
        let slots = state.renderSlots()
        let (batchKeys, version, paths) = (state.batchKeys, state.version, state.identityPaths)
        // The render's tree is decoded and checked on the lane as the reply arrives: the host's
        // render after the action then takes it with no second trip to the lane.
        let reply = try await callOnLane(.actionThenRender(instance: id, name: name, payload: payload, slots: slots), as: running, in: context,
                                         then: { reply -> (reply: IsolationReply, render: WorkerPrerender?) in
            guard case .acted(let status, let render?) = reply, status.isOK else { return (reply, nil) }
            guard render.status.isOK else { return (reply, .checked(render, .failure(Self.failure(render.status)))) }
            return (reply, .checked(render, .success(StateStorage.checked(.binary(render.tree), identityPaths: paths))))
        }, returned: { [self] result in
            // Kept before the work that waited for the lane runs: any call it makes drops it.
            guard let render = result.render else { return }
            prerendered = PrerenderedTree(instance: instance, storage: state, version: version, batchKeys: batchKeys,
                                          callsMade: group.callsMade, result: render)
        })
        guard case .acted(let status, _) = reply.reply, status.isOK else { throw Self.failure(reply.reply.status) }
    }

    func createOnLane(route: String, argument: [UInt8], screen: ScreenHandle, as running: RunningPluginCall.Call,
                      in context: LaneCallContext) async throws(PluginCallError) -> PluginInstanceID {
        let token = group.router.register(screen, member: member)
        let reply: IsolationReply
        do {
            reply = try await callOnLane(.create(plugin: member, screen: token, route: route, argument: argument), as: running, in: context)
        } catch {
            group.router.unregister(token)
            throw error
        }
        guard case .created(let status, let instance) = reply, status.isOK else {
            group.router.unregister(token)
            throw Self.failure(reply.status)
        }
        group.router.bind(instance: instance, to: token)
        return PluginInstanceID(rawValue: UInt(instance))
    }

    func activateOnLane(_ instance: PluginInstanceID, as running: RunningPluginCall.Call, in context: LaneCallContext) async throws(PluginCallError) {
        let reply = try await callOnLane(.activate(instance: UInt64(instance.rawValue)), as: running, in: context)
        guard reply.status.isOK else { throw Self.failure(reply.status) }
    }

    func deliverOnLane(_ delivery: LaneDelivery, as running: RunningPluginCall.Call, in context: LaneCallContext) async throws(PluginCallError) {
        let request: IsolationRequest
        switch delivery {
        case .delegate(let instance, let child, let action, let payload):
            request = .delegateReceived(instance: UInt64(instance.rawValue), child: UInt64(child), name: action, payload: payload)
        case .context(let instance, let type, let payload):
            request = .contextReceived(instance: UInt64(instance.rawValue), type: type, payload: payload)
        }
        let reply = try await callOnLane(request, as: running, in: context)
        guard reply.status.isOK else { throw Self.failure(reply.status) }
    }

    private func callOnLane(_ request: IsolationRequest, as running: RunningPluginCall.Call, in context: LaneCallContext) async throws(PluginCallError) -> IsolationReply {
        try await callOnLane(request, as: running, in: context) { $0 }
    }

    /// A round trip on the lane, with `then` run there on the reply, and `returned` on the
    /// main actor before the work that waited for the lane.
    private func callOnLane<T: Sendable>(_ request: IsolationRequest, as running: RunningPluginCall.Call, in context: LaneCallContext,
                                         then: @escaping @Sendable (IsolationReply) -> T,
                                         returned: (T) -> Void = { _ in }) async throws(PluginCallError) -> T {
        try callable(waiting: false)
        do {
            return try await group.callOnLane(request, as: running, in: context, then: then, returned: returned)
        } catch {
            let failure = self.failure ?? group.fail(error).naming(pluginID)
            throw PluginCallError(status: Int32(BERTH_ERR_FAILED), message: failure.message)
        }
    }

    /// Refuses a call the worker cannot take now: it failed, or its lane is in another call.
    /// A call of the synchronous API (`waiting`) waits a while for a task's post first.
    private func callable(waiting: Bool) throws(PluginCallError) {
        discardPrerenderedTree()
        if let failure { throw PluginCallError(status: Int32(BERTH_ERR_FAILED), message: failure.message) }
        if waiting { group.lane.waitForHostCall() }
        if let busy = group.lane.refusingCall { throw PluginCallError.busy(pluginID, busy) }
    }

    func action(_ instance: PluginInstanceID, name: String, payload: [UInt8]) throws(PluginCallError) {
        try check(.action(instance: UInt64(instance.rawValue), name: name, payload: payload))
    }

    /// One round trip for the action and the render after it: when the action called nothing
    /// back in the host, the worker renders right after it, and the result (a failed render
    /// included) waits here for the host's `render` of this instance.
    func action(_ instance: PluginInstanceID, name: String, payload: [UInt8], renderingAfterwards state: StateStorage) throws(PluginCallError) {
        guard handshake.functions.contains(.renderTree) else { return try action(instance, name: name, payload: payload) }
        discardPrerenderedTree()
        let slots = state.renderSlots()
        let (batchKeys, version) = (state.batchKeys, state.version)
        let reply = try call(.actionThenRender(instance: UInt64(instance.rawValue), name: name, payload: payload, slots: slots))
        guard case .acted(let status, let render) = reply, status.isOK else { throw Self.failure(reply.status) }
        guard let render else { return }
        prerendered = PrerenderedTree(instance: instance, storage: state, version: version, batchKeys: batchKeys,
                                      callsMade: group.callsMade, result: .raw(render))
    }

    func delegateReceived(_ instance: PluginInstanceID, from child: Int, action: String, payload: [UInt8]) throws(PluginCallError) {
        try check(.delegateReceived(instance: UInt64(instance.rawValue), child: UInt64(child), name: action, payload: payload))
    }

    func contextReceived(_ instance: PluginInstanceID, type: String, payload: [UInt8]) throws(PluginCallError) {
        try check(.contextReceived(instance: UInt64(instance.rawValue), type: type, payload: payload))
    }

    /// One round trip: the instance's slots go with the request; the reply says which were
    /// read (they stay alive in this pass) and what was written.
    func render(_ instance: PluginInstanceID, state: StateStorage) throws(PluginCallError) -> RenderedTree {
        if let ready = takePrerendered(instance, state: state) { return try ready.raw.get() }
        discardPrerenderedTree()
        let request = renderRequest(instance, state: state)
        return try rendered(call(request.request), slots: request.slots, state: state)
    }

    /// The render on the worker's lane: the round trip, then the tree's decode and limit
    /// checks on the lane's thread; a render made with the last action is decoded there too.
    func renderOnLane(_ instance: PluginInstanceID, state: StateStorage, as running: RunningPluginCall.Call,
                      in context: LaneCallContext) async throws(PluginCallError) -> CheckedRender {
        let paths = state.identityPaths
        if let busy = group.lane.busy { throw PluginCallError.busy(pluginID, busy) }
        if let ready = takePrerendered(instance, state: state) {
            if let checked = ready.checked { return try checked.get() }
            let output = try ready.raw.get()
            return await group.lane.run(running, in: context) { StateStorage.checked(output, identityPaths: paths) }
        }
        let request = renderRequest(instance, state: state)
        let json = request.slots != nil
        let checked = try await callOnLane(request.request, as: running, in: context) { reply -> (reply: IsolationReply, tree: CheckedRender?) in
            guard case .rendered(let result) = reply, result.status.isOK else { return (reply, nil) }
            return (reply, StateStorage.checked(json ? .json(result.tree) : .binary(result.tree), identityPaths: paths))
        }
        _ = try rendered(checked.reply, slots: request.slots, state: state)
        guard let tree = checked.tree else { throw Self.failure(checked.reply.status) }
        return tree
    }

    /// The render the worker made with the last action, when nothing changed since: its tree,
    /// or its failure.
    private func takePrerendered(_ instance: PluginInstanceID, state: StateStorage) -> WorkerPrerender? {
        guard let ready = prerendered?.take(for: instance, state: state, callsMade: group.callsMade) else { return nil }
        prerendered = nil
        rendersTakenFromActions += 1
        return ready
    }

    /// A render's request: `render_tree` with the slots in a batch, or a v1.0 `render` with
    /// every slot (`slots`: what its reply's read indices name).
    private func renderRequest(_ instance: PluginInstanceID, state: StateStorage) -> (request: IsolationRequest, slots: [IsolationStateSlot]?) {
        if handshake.functions.contains(.renderTree) {
            return (.renderTree(instance: UInt64(instance.rawValue), slots: state.renderSlots()), nil)
        }
        let slots = state.snapshot.map { key, slot in
            IsolationStateSlot(identity: key.identity, index: key.index, fingerprint: slot.fingerprint, bytes: slot.bytes)
        }
        return (.render(instance: UInt64(instance.rawValue), slots: slots), slots)
    }

    /// A render's reply: a v1.0 render's reads and writes go to `state` (its reads keep
    /// their slots alive in this pass), then its tree or its failure.
    private func rendered(_ reply: IsolationReply, slots: [IsolationStateSlot]?, state: StateStorage) throws(PluginCallError) -> RenderedTree {
        guard case .rendered(let result) = reply else { throw Self.failure(reply.status) }
        guard let slots else {
            guard result.status.isOK else { throw Self.failure(result.status) }
            return .binary(result.tree)
        }
        for index in result.readSlots where Int(index) < slots.count {
            let slot = slots[Int(index)]
            _ = state.read(identity: slot.key.identity, index: slot.key.index, fingerprint: slot.fingerprint)
        }
        for write in result.writes {
            state.write(identity: write.key.identity, index: write.key.index, fingerprint: write.fingerprint, bytes: write.bytes)
        }
        guard result.status.isOK else { throw Self.failure(result.status) }
        return .json(result.tree)
    }

    func saveState(_ instance: PluginInstanceID) throws(PluginCallError) -> [UInt8] {
        let reply = try call(.saveState(instance: UInt64(instance.rawValue)))
        guard case .bytes(let status, let bytes) = reply, status.isOK else { throw Self.failure(reply.status) }
        return bytes
    }

    func restoreState(_ instance: PluginInstanceID, _ bytes: [UInt8]) throws(PluginCallError) {
        try check(.restoreState(instance: UInt64(instance.rawValue), state: bytes))
    }

    func callExport(_ symbol: String, arguments: [FFIValue]) throws(FFIError) -> FFIValue {
        let reply: IsolationReply
        do {
            reply = try call(.callExport(plugin: member, symbol: symbol, arguments: arguments))
        } catch {
            throw FFIError(.pluginFailed, "\(pluginID) \(symbol): \(error.message)")
        }
        switch reply {
        case .exported(let value): return value
        case .exportFailed(let error): throw error
        default: throw FFIError(.pluginFailed, "\(pluginID) \(symbol): unexpected reply \(reply)")
        }
    }

    /// A front end's read (the inspector's figures): refused, not waited for, during a post.
    func resourceUsage() throws(PluginCallError) -> PluginResourceUsage {
        let reply = try call(.usage, waiting: false)
        guard case .usage(let usage) = reply else { throw Self.failure(reply.status) }
        return usage
    }

    /// One instance of a service the worker registered (`WorkerServiceLink`).
    func makeServiceInstance(service: UInt64, key: String) throws(ScopeError) -> ScopedValue {
        let reply: IsolationReply
        do {
            reply = try call(.serviceCreate(service: service))
        } catch {
            throw ScopeError(.factoryFailed, key: key, error.message)
        }
        guard case .created(let status, let instance) = reply, status.isOK else { throw ScopeError(.factoryFailed, key: key, reply.status.message) }
        return .workerInstance(instance)
    }

    /// The provider's release of one instance; nothing to do once the worker is gone.
    func releaseServiceInstance(_ instance: UInt64) {
        group.lane.whenFree { [self] in
            guard failure == nil else { return }
            _ = try? call(.serviceRelease(instance: instance))
        }
    }

    /// Exports run in the worker: a typed call site sends its values like `callExport`.
    func exportFunction(_ symbol: String) -> ForeignFunction? { nil }

    /// Asks the worker to unload the plugin; the last member of a worker also stops it (and
    /// kills it when it does not exit). Nothing stays mapped in the host. The last member's
    /// unload and the worker's end run on the worker's lane unless `waitingForWorker`.
    func end(waitingForWorker: Bool) throws(LoaderError) -> GenerationEnding {
        if !waitingForWorker, group.endOnLane(lastMember: member, stops: workerPool) {
            runtimeDirectory.discard(shadowCopy: imagePath)
            return .workerEnding
        }
        if failure == nil { _ = try? group.call(.unload(plugin: member), timeout: .seconds(2)) }
        let stopped = group.leave(member)
        runtimeDirectory.discard(shadowCopy: imagePath)
        guard !stopped, let name = group.name else { return .workerEnded }
        return .leftGroupWorker(group: name)
    }

    // MARK: Calls and failure

    private func call(_ request: IsolationRequest, waiting: Bool = true) throws(PluginCallError) -> IsolationReply {
        try callable(waiting: waiting)
        do {
            return try group.call(request)
        } catch {
            let failure = self.failure ?? group.fail(error).naming(pluginID)
            throw PluginCallError(status: Int32(BERTH_ERR_FAILED), message: failure.message)
        }
    }

    /// Any call into the worker may change what the plugin renders: a tree made before it
    /// is not used, but the identities it defined are taken in (the plugin has sent them).
    private func discardPrerenderedTree() {
        guard let stale = prerendered else { return }
        prerendered = nil
        guard stale.result.render.status.isOK else { return }
        try? stale.storage.takeDefinitions(of: stale.result.render.tree)
    }

    private func check(_ request: IsolationRequest) throws(PluginCallError) {
        let reply = try call(request)
        guard reply.status.isOK else { throw Self.failure(reply.status) }
    }

    nonisolated static func failure(_ status: IsolationStatus) -> PluginCallError {
        PluginCallError(status: status.code, message: status.message.isEmpty ? "failed with status \(status.code) and no message" : status.message)
    }

    /// The group's worker failed: recorded with this plugin named, and the host told once.
    func workerFailed(_ groupFailure: WorkerFailure) {
        guard failure == nil else { return }
        let failure = groupFailure.naming(pluginID)
        self.failure = failure
        onFailure?(failure)
    }
}

/// Why an isolated plugin's worker is gone: its signal or exit status, and the last fatal
/// line it wrote to stderr.
struct WorkerFailure: Sendable, Equatable {
    /// What ended the worker.
    enum Cause: Sendable, Equatable, CustomStringConvertible {
        /// It ended by itself or by a signal (a crash, or a kill from outside).
        case ended(WorkerTermination)
        /// It stopped answering within the call's deadline, and the host killed it.
        case unresponsive

        /// `SIGSEGV`, `exited with status 3`, or `unresponsive`.
        var description: String {
            switch self {
            case .ended(let termination): termination.signalName ?? termination.description
            case .unresponsive: "unresponsive"
            }
        }
    }

    var plugin: String
    var cause: Cause
    /// The worker's last "Fatal error" (or similar) line, if it wrote one, at the plugin's
    /// own line, then its own frames ("; stack: …", `FatalErrorReport.Located.text`).
    var fatalLine: String?

    /// The cause as the event log words it.
    var causeText: String { cause.description }

    /// - Parameter images: the plugin images the worker loaded; a trap in the standard
    ///   library is reported at the first of their lines in its stack trace.
    init(plugin: String, worker: WorkerProcess, channelError: ChannelError, images: [String] = []) {
        self.plugin = plugin
        if channelError.code == .timedOut {
            _ = worker.kill()
            _ = worker.waitForExit(timeout: .seconds(2))
            cause = .unresponsive
        } else {
            let termination = worker.waitForExit(timeout: .seconds(2)) ?? {
                _ = worker.kill()
                return worker.waitForExit()
            }()
            cause = .ended(termination)
        }
        fatalLine = worker.lastFatalError?.located(in: images).text ?? worker.lastFatalLine
    }

    /// The same failure, told to the member `plugin` of the worker's group.
    func naming(_ plugin: String) -> WorkerFailure {
        var copy = self
        copy.plugin = plugin
        return copy
    }

    /// The cause and the fatal line.
    var summary: String { causeText + (fatalLine.map { ": \($0)" } ?? "") }

    /// One line for the event log and for the failed call.
    var message: String {
        "the worker of \(plugin) crashed (\(causeText))" + (fatalLine.map { ": \($0)" } ?? "")
    }
}

/// The render a worker made right after an action: as the worker sent it (a blocking
/// action's), or also decoded and checked on the lane (an action on the lane's).
enum WorkerPrerender: Sendable {
    case raw(IsolationRenderResult)
    case checked(IsolationRenderResult, Result<CheckedRender, PluginCallError>)

    /// What the worker sent.
    var render: IsolationRenderResult {
        switch self {
        case .raw(let render), .checked(let render, _): render
        }
    }

    /// The worker's tree, or its render's failure.
    var raw: Result<RenderedTree, PluginCallError> {
        render.status.isOK ? .success(.binary(render.tree)) : .failure(IsolatedPlugin.failure(render.status))
    }

    /// The tree as checked on the lane, if it was.
    var checked: Result<CheckedRender, PluginCallError>? {
        if case .checked(_, let checked) = self { checked } else { nil }
    }
}
