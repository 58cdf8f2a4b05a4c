@_spi(Engine) import BerthCore
import Logging
internal import CBerth

/// The host's handler of one worker's requests: it names each open screen of the worker by
/// a token, knows which plugin generation (member) each belongs to, and turns the worker's
/// plugin → host requests (`PluginToHost`) into `HostCallbackHandler.answer`.
///
/// The channel calls it on the thread that is reading: the main actor, either inside a
/// host → plugin call (a re-entrant request, answered on the same stack) or while serving
/// what arrived between calls. Its tables are the main actor's; `handle` and `receive`
/// assume that isolation (a call from another thread traps).
@MainActor
final class IsolatedCallRouter: IsolationChannelHandler {
    /// The plugin generations the worker hosts: what each one's services and sessions are
    /// served with.
    private var members: [UInt64: WorkerServiceLink] = [:]
    /// Where each member's lines go (its logger and budget), read on the lane as a line
    /// arrives: a log line waits for no main actor (as in process, where it is written on
    /// the calling thread). Kept with `members` by `add` and `remove`.
    private nonisolated let logSinks = Locked<[UInt64: LogSink]>([:])
    private var screens: [UInt64: ScreenHandle] = [:]
    /// Each screen token's member.
    private(set) var screenMembers: [UInt64: UInt64] = [:]
    private var instances: [UInt64: UInt64] = [:]
    private var nextToken: UInt64 = 1
    private let logger: Logger
    /// Task posts deferred until the host is done with what it is doing.
    private let hops = MainActorHops()
    private var refusedCalls = RefusedCallLog()
    /// The manifest group whose worker it serves; nil for one plugin's own worker.
    let groupName: String?
    /// Inside a group the host cannot tell members apart (they share one process), so every
    /// line is the group's, under one budget; a lone plugin's are its own.
    private nonisolated let groupLog: LogSink?

    struct LogSink: Sendable {
        let logger: Logger
        let budget: LogBudget
    }

    /// `logger` takes the lines of a NULL or unknown plugin handle, as the group's or, in a
    /// plugin's own worker, as that plugin's.
    init(logger: Logger, group: String? = nil) {
        var logger = logger
        groupName = group
        if let group {
            logger[metadataKey: "plugin"] = "group \(group)"
            groupLog = LogSink(logger: logger, budget: LogBudget(limits: PluginLimits()))
        } else {
            groupLog = nil
        }
        self.logger = logger
    }

    /// The members whose code the host is calling now, innermost last (a call into the
    /// worker can re-enter it); nil for a call that runs no member's code of its own.
    private var calling: [UInt64?] = []

    /// The member whose code runs in the host's innermost call, if any.
    var currentMember: UInt64? { calling.last ?? nil }

    /// Brackets one host → worker call (`WorkerGroup.call`).
    func enter(_ request: IsolationRequest) { calling.append(member(addressedBy: request)) }
    func leave() { calling.removeLast() }

    func member(ofInstance instance: UInt64) -> UInt64? {
        instances[instance].flatMap { screenMembers[$0] }
    }

    func pluginID(of member: UInt64) -> String {
        members[member]?.pluginID ?? "member \(member)"
    }

    /// A member whose manifest lacks `capability`, if any.
    func memberLacking(_ capability: Capability) -> String? {
        members.values.sorted { $0.pluginID < $1.pluginID }
            .first { $0.grant.check(capability, call: "") != nil }?.pluginID
    }

    /// A generation about to say hello (its entry may register services).
    @MainActor
    func add(member: UInt64, services: WorkerServiceLink, logger: Logger, limits: PluginLimits = PluginLimits()) {
        members[member] = services
        logSinks.withLock { $0[member] = LogSink(logger: logger, budget: LogBudget(limits: limits)) }
    }

    /// Where the line of `member` goes: the group's log, its own, or (a handle the host does
    /// not know) the worker's only plugin's. Any thread.
    nonisolated func log(of member: UInt64) -> LogSink? {
        if let groupLog { return groupLog }
        return logSinks.withLock { sinks in sinks[member] ?? (sinks.count == 1 ? sinks.values.first : nil) }
    }

    @MainActor
    func remove(member: UInt64) {
        members[member] = nil
        logSinks.withLock { $0[member] = nil }
    }

    /// A token for a screen of `member` about to be created.
    @MainActor
    func register(_ screen: ScreenHandle, member: UInt64) -> UInt64 {
        defer { nextToken += 1 }
        screens[nextToken] = screen
        screenMembers[nextToken] = member
        return nextToken
    }

    @MainActor
    func unregister(_ token: UInt64) {
        screens[token] = nil
        screenMembers[token] = nil
    }

    @MainActor
    func bind(instance: UInt64, to token: UInt64) {
        instances[instance] = token
    }

    /// The instance was destroyed: its screen's token goes too.
    @MainActor
    func unbind(instance: UInt64) {
        if let token = instances.removeValue(forKey: instance) { unregister(token) }
    }

    // MARK: IsolationChannelHandler

    nonisolated func handle(_ request: IsolationRequest, on channel: IsolationChannel) -> IsolationReply {
        HostCallbackCount.record()
        // A contract call waits for its provider here, on the worker's lane, not on the main
        // actor, which only resolves the instance.
        if case .host(.serviceCall(let key, let bytes), let token) = request {
            let found = LaneHop.toMain { [self] () -> (ScreenHandle, WorkerServiceLink)? in
                guard let handle = screens[token], let services = screenMembers[token].flatMap({ members[$0] }) else { return nil }
                return (handle, services)
            }
            guard let (handle, services) = found else { return HostAnswer.refused(PluginToHost.serviceCall(key: key, request: []).notOpen).reply }
            return HostCallbackHandler.callService(key, request: bytes, from: handle, consumer: services.consumer).reply
        }
        return LaneHop.toMain { self.answer(request) }
    }

    nonisolated func receive(_ notification: IsolationNotification, on channel: IsolationChannel) {
        // As in process: logging and a task's end cannot change what a screen renders.
        switch notification {
        case .log, .taskFinished, .refusedSystemCall: break
        case .taskStarted, .stateWrite, .taskPost, .denied: HostCallbackCount.record()
        }
        switch notification {
        case .log(let member, let level, let message):
            guard let log = log(of: member) else {
                logger.log(level: HostTable.logLevel(level), "\(message.prefix(PluginLimits.defaultLogLineBytes))")
                return
            }
            log.budget.log(message, level: HostTable.logLevel(level), to: log.logger)
        case .taskStarted(let token, let key, let task):
            LaneHop.toMain { [self] in
                guard let handle = screens[token], let module = handle.module, let host = handle.host else { return }
                module.workerTasks.insert(task)
                host.emit(.event, .screen(module.id), "task '\(key)' started")
            }
        case .taskFinished(let token, _, let task, _):
            LaneHop.toMain { [self] in
                _ = screens[token]?.module?.workerTasks.remove(task)
            }
        case .stateWrite(let token, let slot):
            LaneHop.toMain { [self] in
                guard let handle = screens[token] else { return }
                _ = HostCallbackHandler().answer(.stateWrite(slot: slot), screen: handle)
            }
        case .taskPost(let token, _, let action, let payload):
            // Runs once the host is done with what it is doing now (never inside a call
            // into this same worker), like the in-process task_post.
            LaneHop.toMain { [self] in
                guard let screen = screens[token] else { return }
                hops.post { HostCallbackHandler().taskPost(screen, action: action, payload: payload) }
            }
        case .denied(let token, let name, let call):
            // Reported only when the host's own grant agrees (a worker cannot forge refusals).
            LaneHop.toMain { [self] in
                guard let screen = screens[token], let capability = Capability(rawValue: name) else { return }
                _ = HostCallbackHandler().permit(screen, capability, call: call)
            }
        case .refusedSystemCall(let call, let count):
            // One event per plugin of the worker: a group's members share the process.
            LaneHop.toMain { [self] in
                let links = Array(members.values)
                guard let host = links.lazy.compactMap(\.host).first, refusedCalls.admit(call: call, count: count) else { return }
                for plugin in Set(links.map(\.pluginID)).sorted() {
                    host.emit(.denied, .plugin(plugin), RefusedCallLog.message(call: call, count: count))
                }
            }
        }
    }

    @MainActor
    private func answer(_ request: IsolationRequest) -> IsolationReply {
        // A screen of another member than the one whose code runs is not this call's to use.
        if let token = request.screenToken, let owner = screenMembers[token], let refused = refusal(request.name, claimed: owner) {
            return refused
        }
        return answerActing(request)
    }

    /// A worker's `PluginToHost`, answered by the same handler as in process; the caller
    /// is a screen token, or for a plugin-wide call the plugin's member.
    @MainActor
    private func answerActing(_ request: IsolationRequest) -> IsolationReply {
        guard case .host(let call, let caller) = request else {
            return .status(IsolationStatus(code: Int32(BERTH_ERR_INVALID_ARGUMENT), message: "\(request.name) is not a request a worker may make"))
        }
        let callbacks = HostCallbackHandler()
        switch call {
        case .sessionBegin, .sessionEnd, .serviceRegister:
            var verb = call.name
            if case .serviceRegister(let key, _, _, _) = call { verb += " \(key)" }
            guard let services = members[caller] else {
                return .status(IsolationStatus(code: Int32(BERTH_ERR_NOT_FOUND), message: "\(call.name): the plugin handle is not a loaded plugin (member \(caller))"))
            }
            let needs: Capability? = if case .serviceRegister = call { nil } else { .session }
            if let refused = refusal(verb, claimed: caller, needs: needs) { return refused }
            // A trial worker's plugin registers too; nothing of it is kept.
            guard let host = services.host else { return .status(.ok) }
            guard case .serviceRegister(let key, let code, let service, let answersCalls) = call else {
                return callbacks.answer(call, plugin: services.grant, host: host).reply
            }
            guard let kind = ScopeKind(code: code) else {
                return .status(IsolationStatus(code: Int32(BERTH_ERR_INVALID_ARGUMENT), message: "service_register \(key): unknown scope \(code)"))
            }
            let registration = services.registration(key: key, kind: kind, service: service, answersCalls: answersCalls)
            return HostAnswer(callbacks.serviceRegister(registration, host: host)).reply
        case .serviceResolve(let key):
            guard let handle = screens[caller], let services = screenMembers[caller].flatMap({ members[$0] }) else {
                return call.whenNotOpen.reply
            }
            switch HostCallbackHandler.serviceResolve(handle, key: key, for: services.consumer) {
            case .success(.workerInstance(let instance)): return HostAnswer.instance(instance).reply
            case .success: return .status(IsolationStatus(code: Int32(BERTH_ERR_STATE), message: "service_resolve \(key): not an instance of this worker"))
            case .failure(let refusal): return HostAnswer.refused(refusal).reply
            }
        default:
            return callbacks.answer(call, screen: screens[caller]).reply
        }
    }
}
