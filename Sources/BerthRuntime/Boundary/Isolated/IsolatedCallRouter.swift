import Logging
internal import CBerth

/// The host's handler of one worker's requests: it names each open screen of the worker by
/// a token, knows which plugin generation (member) each belongs to, and turns the worker's
/// plugin → host requests into `HostCallbacks` calls.
///
/// The channel calls it on the thread that is reading: the main actor, either inside a
/// host → plugin call (a re-entrant request, answered on the same stack) or while serving
/// what arrived between calls. Its tables are the main actor's; `handle` and `receive`
/// assume that isolation (a call from another thread traps).
@MainActor
final class IsolatedCallRouter: IsolationChannelHandler {
    /// A plugin generation the worker hosts: what its services and sessions are served with,
    /// and the logger of its lines.
    private struct Member {
        let services: WorkerServiceLink
        let logger: Logger
        let logBudget: LogBudget
    }

    private var members: [UInt64: Member] = [:]
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
    private var groupLog: (logger: Logger, budget: LogBudget)?

    /// `logger` takes the lines of a NULL or unknown plugin handle, as the group's or, in a
    /// plugin's own worker, as that plugin's.
    init(logger: Logger, group: String? = nil) {
        var logger = logger
        groupName = group
        if let group {
            logger[metadataKey: "plugin"] = "group \(group)"
            groupLog = (logger, LogBudget(limits: PluginLimits()))
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
        members[member]?.services.pluginID ?? "member \(member)"
    }

    /// A member whose manifest lacks `capability`, if any.
    func memberLacking(_ capability: Capability) -> String? {
        members.values.map(\.services).sorted { $0.pluginID < $1.pluginID }
            .first { $0.grant.check(capability, call: "") != nil }?.pluginID
    }

    /// A generation about to say hello (its entry may register services).
    @MainActor
    func add(member: UInt64, services: WorkerServiceLink, logger: Logger, limits: PluginLimits = PluginLimits()) {
        members[member] = Member(services: services, logger: logger, logBudget: LogBudget(limits: limits))
    }

    /// Where the line of `member` goes: the group's log, its own, or (a handle the host does
    /// not know) the worker's only plugin's.
    private func log(of member: UInt64) -> (logger: Logger, budget: LogBudget)? {
        if let groupLog { return groupLog }
        if let known = members[member] ?? (members.count == 1 ? members.values.first : nil) { return (known.logger, known.logBudget) }
        return nil
    }

    @MainActor
    func remove(member: UInt64) {
        members[member] = nil
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
        if case .serviceCall(let token, let key, let bytes) = request {
            let found = LaneHop.toMain { [self] () -> (ScreenHandle, WorkerServiceLink)? in
                guard let handle = screens[token], let services = screenMembers[token].flatMap({ members[$0]?.services }) else { return nil }
                return (handle, services)
            }
            guard let (handle, services) = found else {
                return .bytes(.failure(Int(BERTH_ERR_NOT_FOUND), "service_call \(key): the screen handle is not an open screen"), [])
            }
            let result = ContractCalls.call(key: key, request: bytes, from: handle, consumer: services.pluginID) {
                HostCallbackHandler.contractTarget(handle, key: key, for: services.consumer)
            }
            switch result {
            case .success(let reply): return .bytes(.ok, reply)
            case .failure(let failure): return .bytes(.failure(Int(failure.status), failure.message), [])
            }
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
            let log = LaneHop.toMain { self.log(of: member) }
            guard let log else {
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
                _ = HostCallbackHandler().stateWrite(handle, identity: slot.key.identity, index: slot.key.index,
                                                     fingerprint: slot.fingerprint, value: slot.bytes)
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
                let links = members.values.map(\.services)
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

    @MainActor
    private func answerActing(_ request: IsolationRequest) -> IsolationReply {
        let callbacks = HostCallbackHandler()
        func screen(_ token: UInt64) -> ScreenHandle? { screens[token] }
        func notLoaded(_ verb: String, _ member: UInt64) -> IsolationReply {
            .status(IsolationStatus(code: Int32(BERTH_ERR_NOT_FOUND), message: "\(verb): the plugin handle is not a loaded plugin (member \(member))"))
        }
        func notOpen(_ verb: String) -> IsolationReply {
            .status(IsolationStatus(code: Int32(BERTH_ERR_NOT_FOUND), message: "\(verb): the screen handle is not an open screen"))
        }
        func status(_ result: Result<Void, HostRefusal>) -> IsolationReply {
            switch result {
            case .success: .status(.ok)
            case .failure(let refusal): .status(IsolationStatus(code: refusal.code.rawValue, message: refusal.message))
            }
        }
        switch request {
        case .navigate(let token, let kind, let route, let argument):
            guard let handle = screen(token) else { return notOpen("navigate") }
            let navigation: NavigationRequest
            do throws(HostRefusal) { navigation = try NavigationRequest(kind: kind, route: route) } catch {
                return .navigated(IsolationStatus(code: error.code.rawValue, message: error.message), screen: 0)
            }
            switch callbacks.navigate(handle, navigation, argument: argument) {
            case .success(let id): return .navigated(.ok, screen: UInt64(id ?? 0))
            case .failure(let refusal): return .navigated(IsolationStatus(code: refusal.code.rawValue, message: refusal.message), screen: 0)
            }
        case .observeDelegate(let token, let child):
            guard let handle = screen(token) else { return notOpen("observe_delegate") }
            return status(callbacks.observeDelegate(handle, child: Int(child)))
        case .sendDelegate(let token, let action, let payload):
            guard let handle = screen(token) else { return notOpen("send_delegate") }
            return status(callbacks.sendDelegate(handle, action: action, payload: payload))
        case .contextObserve(let token, let type):
            guard let handle = screen(token) else { return notOpen("context_observe") }
            return status(callbacks.contextObserve(handle, type: type))
        case .contextUnobserve(let token, let type):
            if let handle = screen(token) { callbacks.contextUnobserve(handle, type: type) }
            return .status(.ok)
        case .contextSend(let token, let type, let payload, let mode):
            guard let handle = screen(token) else { return notOpen("context_send") }
            return status(callbacks.contextSend(handle, type: type, payload: payload, terminate: mode == BERTH_CONTEXT_TERMINATE))
        case .contextCanTerminate(let token, let type):
            guard let handle = screen(token) else { return .flag(false) }
            return .flag(callbacks.contextCanTerminate(handle, type: type))
        case .stateRead(let token, let key, let fingerprint):
            guard let handle = screen(token) else { return notOpen("state_read") }
            switch callbacks.stateRead(handle, identity: key.identity, index: key.index, fingerprint: fingerprint) {
            case .success(let bytes?): return .bytes(.ok, bytes)
            case .success(nil): return .bytes(IsolationStatus(code: Int32(BERTH_ERR_NOT_FOUND)), [])
            case .failure(let refusal): return .bytes(IsolationStatus(code: refusal.code.rawValue, message: refusal.message), [])
            }
        case .persistRead(let token, let key):
            guard let handle = screen(token) else { return notOpen("persist_read") }
            switch callbacks.persistRead(handle, key: key) {
            case .success(let bytes?): return .bytes(.ok, bytes)
            case .success(nil): return .bytes(IsolationStatus(code: Int32(BERTH_ERR_NOT_FOUND)), [])
            case .failure(let refusal): return .bytes(IsolationStatus(code: refusal.code.rawValue, message: refusal.message), [])
            }
        case .persistWrite(let token, let key, let value):
            guard let handle = screen(token) else { return notOpen("persist_write") }
            return status(callbacks.persistWrite(handle, key: key, value: value))
        case .sessionBegin(let member, let id):
            guard let services = members[member]?.services else { return notLoaded("session_begin", member) }
            if let refused = refusal("session_begin", claimed: member, needs: .session) { return refused }
            guard let host = services.host else { return .status(.ok) }
            return status(callbacks.sessionBegin(services.grant, host: host, id: id))
        case .sessionEnd(let member):
            guard let services = members[member]?.services else { return notLoaded("session_end", member) }
            if let refused = refusal("session_end", claimed: member, needs: .session) { return refused }
            guard let host = services.host else { return .status(.ok) }
            return status(callbacks.sessionEnd(services.grant, host: host))
        case .serviceRegister(let member, let key, let code, let service, let answersCalls):
            guard let services = members[member]?.services else { return notLoaded("service_register", member) }
            if let refused = refusal("service_register \(key)", claimed: member) { return refused }
            // A trial worker's plugin registers too; nothing of it is kept.
            guard let host = services.host else { return .status(.ok) }
            guard let kind = ScopeKind(code: code) else {
                return .status(IsolationStatus(code: Int32(BERTH_ERR_INVALID_ARGUMENT), message: "service_register \(key): unknown scope \(code)"))
            }
            return status(callbacks.serviceRegister(services.registration(key: key, kind: kind, service: service, answersCalls: answersCalls), host: host))
        case .serviceResolve(let token, let key):
            guard let handle = screen(token), let services = screenMembers[token].flatMap({ members[$0]?.services }) else {
                return notOpen("service_resolve \(key)")
            }
            switch HostCallbackHandler.serviceResolve(handle, key: key, for: services.consumer) {
            case .success(.workerInstance(let instance)): return .created(.ok, instance: instance)
            case .success: return .status(IsolationStatus(code: Int32(BERTH_ERR_STATE), message: "service_resolve \(key): not an instance of this worker"))
            case .failure(let refusal): return status(.failure(refusal))
            }
        default:
            return .status(IsolationStatus(code: Int32(BERTH_ERR_INVALID_ARGUMENT), message: "\(request.name) is not a request a worker may make"))
        }
    }
}
