@_spi(Engine) import BerthCore
internal import CBerth
import Foundation

/// What the host needs to serve one worker's services and sessions: the generation that
/// registers, its grant, the worker's place, and the plugin connection that makes and
/// releases instances in the worker. Made before the worker's `hello` (a plugin registers
/// from its entry function), connected to its `IsolatedPlugin` once that exists.
///
/// `Sendable` (the registry's factory and release closures hold it): `host` and `plugin`
/// are the main actor's, the other fields immutable.
final class WorkerServiceLink: Sendable {
    let pluginID: String
    let generation: Int
    let grant: CapabilityGrant
    let place: ServicePlace
    /// Its worker's instances whose scope ended off the main actor (`WorkerGroup`).
    let endedOffMain: Locked<[UInt64]>
    /// nil in a trial worker (`CanaryLoad`): registrations are accepted and not kept.
    @MainActor weak var host: (any PluginFacingHost)?
    @MainActor weak var plugin: IsolatedPlugin?
    /// Releases of worker instances asked for off the main actor, until they ran.
    let hops = MainActorHops()

    init(pluginID: String, generation: Int, grant: CapabilityGrant, place: ServicePlace, endedOffMain: Locked<[UInt64]>,
         host: (any PluginFacingHost)?) {
        self.pluginID = pluginID
        self.generation = generation
        self.grant = grant
        self.place = place
        self.endedOffMain = endedOffMain
        self.host = host
    }

    /// Marks the main queue, which runs the main actor's jobs (`Thread.isMainThread` cannot
    /// tell on Linux, where the main actor need not run on the process's first thread).
    private static let mainQueueMark: DispatchSpecificKey<Bool> = {
        let key = DispatchSpecificKey<Bool>()
        DispatchQueue.main.setSpecific(key: key, value: true)
        return key
    }()

    /// True on the host's main actor: inside a call into a plugin, or in a main-queue job.
    private static var isOnMainActor: Bool {
        HostCall.isInside || DispatchQueue.getSpecific(key: mainQueueMark) == true
    }

    /// A contract call's way into this worker: on its lane (nested when the consumer is in
    /// this worker too); a worker that dies or stops answering fails the call, naming it.
    @MainActor
    private func contractRoute(key: String, instance: ScopedValue, request: [UInt8], timeout: Duration) -> ContractRoute {
        let provider = "\(pluginID)#\(generation)"
        guard case .object(let object) = instance, let contract = object as? WorkerContractInstance else {
            return .failed(ContractCalls.unavailable(key, "not an instance of its provider's worker"))
        }
        guard let plugin, plugin.failure == nil else {
            return .failed(PluginCallError(status: Int32(BERTH_ERR_CRASHED), message: "\(key): its provider \(provider) crashed or stopped"))
        }
        let group = plugin.group
        let worker = group.worker
        let channel = worker.channel
        let images = group.memberImages
        let job: @Sendable () -> Result<[UInt8], PluginCallError> = {
            let reply: Result<IsolationReply, ChannelError>
            do throws(ChannelError) {
                switch try contract.instance(in: channel, key: key) {
                case .success(let token): reply = .success(try channel.call(.serviceInvoke(instance: token, request: request), timeout: timeout))
                case .failure(let refusal): return .failure(refusal)
                }
            } catch {
                reply = .failure(error)
            }
            // A worker that died is named as the host's crash event names it: its signal and
            // the plugin's fatal line (read here, on the lane: the worker has already ended).
            let crash: (ChannelError) -> String = { error in
                WorkerFailure(plugin: provider, worker: worker, channelError: error, images: images).summary
            }
            return ContractCalls.answer(reply, provider: provider, contract: key, crash: crash)
        }
        return ContractCalls.route(to: group.lane, provider: provider, contract: key, job: job) { [weak group] result in
            // The worker's end is every member's, recorded before the consumer hears of it:
            // one that did not answer in time is hung and is killed, as the watchdog would.
            guard case .failure(let failure) = result else { return }
            switch failure.status {
            case Int32(BERTH_ERR_TIMED_OUT): group?.fail(ChannelError(.timedOut, peer: provider, operation: "call service_invoke"))
            case Int32(BERTH_ERR_CRASHED): group?.fail(ChannelError(.peerClosed, peer: provider, operation: "call service_invoke"))
            default: break
            }
        }
    }

    /// Who resolves from this worker.
    var consumer: ServiceConsumer { ServiceConsumer(grant: grant, place: place) }

    /// The host's registration of a service the worker keeps as `service`: its factory
    /// asks the worker for an instance, its release tells the worker to let one go.
    func registration(key: String, kind: ScopeKind, service: UInt64, answersCalls: Bool = false) -> ScopeRegistry.Registration {
        var call: ContractCall?
        if answersCalls {
            call = { @MainActor [self] (instance: ScopedValue, request: [UInt8], timeout: Duration) -> ContractRoute in
                contractRoute(key: key, instance: instance, request: request, timeout: timeout)
            }
        }
        if answersCalls {
            // A contract's instance is made in the worker by its first call, on the
            // worker's lane: neither the resolve nor the main actor waits for the provider.
            return ScopeRegistry.Registration(
                key: key, kind: kind, plugin: pluginID, generation: generation, place: place, providerGrant: grant, call: call,
                make: .sync { .object(WorkerContractInstance(service: service)) },
                release: { [self] value in
                    guard case .object(let object) = value, let contract = object as? WorkerContractInstance,
                          let made = contract.release() else { return }
                    releaseInWorker(made)
                }
            )
        }
        return ScopeRegistry.Registration(
            key: key, kind: kind, plugin: pluginID, generation: generation, place: place, providerGrant: grant,
            call: call,
            make: .sync { [self] in
                // Only this worker resolves the key (the place check), and it does so inside
                // a call the host makes on its main thread.
                guard Self.isOnMainActor else {
                    throw ScopeError(.factoryFailed, key: key, "a worker's instance is made on the host's main thread only")
                }
                return try MainActor.assumeIsolated {
                    guard let plugin else { throw ScopeError(.providerUnloaded, key: key, "its worker is gone") }
                    return try plugin.makeServiceInstance(service: service, key: key)
                }
            },
            release: { [self] value in
                guard case .workerInstance(let instance) = value else { return }
                releaseInWorker(instance)
            }
        )
    }

    /// Lets the worker release `instance`: now on the main actor, else before its next call,
    /// so it never answers with it.
    private func releaseInWorker(_ instance: UInt64) {
        if Self.isOnMainActor {
            MainActor.assumeIsolated { plugin?.releaseServiceInstance(instance) }
        } else {
            endedOffMain.withLock { $0.append(instance) }
            hops.post { self.plugin?.group.releaseEndedOffMain() }
        }
    }
}

/// A worker contract's instance as a scope holds it: made in the worker by its first call
/// (on the worker's lane, one call at a time), released by its scope's end. A release before
/// the first call makes nothing; a call after the release is refused.
final class WorkerContractInstance: Sendable {
    private struct State {
        var made: UInt64?
        var released = false
    }

    /// The worker's declaration it is made from.
    let service: UInt64
    private let state = Locked(State())

    init(service: UInt64) {
        self.service = service
    }

    /// The worker's instance, made now on its first call (on the worker's lane).
    func instance(in channel: IsolationChannel, key: String) throws(ChannelError) -> Result<UInt64, PluginCallError> {
        switch state.withLock({ ($0.made, $0.released) }) {
        case (_, true): return .failure(ContractCalls.unavailable(key, "its scope ended before the call"))
        case (let made?, false): return .success(made)
        case (nil, false): break
        }
        let reply = try channel.call(.serviceCreate(service: service))
        guard case .created(let status, let made) = reply, status.isOK else {
            return .failure(PluginCallError(status: Int32(BERTH_ERR_FAILED), message: "\(key): its provider could not make an instance: \(reply.status.message)"))
        }
        let kept = state.withLock { state -> Bool in
            guard !state.released else { return false }
            state.made = made
            return true
        }
        guard kept else {
            _ = try channel.call(.serviceRelease(instance: made))
            return .failure(ContractCalls.unavailable(key, "its scope ended before the call"))
        }
        return .success(made)
    }

    /// The scope ended: the worker's instance to release, if one was made.
    func release() -> UInt64? {
        state.withLock { state in
            state.released = true
            defer { state.made = nil }
            return state.made
        }
    }
}
