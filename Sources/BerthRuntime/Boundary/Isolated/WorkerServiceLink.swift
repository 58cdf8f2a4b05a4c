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
    private func contractRoute(key: String, instance: ScopedValue, request: [UInt8]) -> ContractRoute {
        let provider = "\(pluginID)#\(generation)"
        guard case .workerInstance(let token) = instance else {
            return .failed(ContractCalls.unavailable(key, "not an instance of its provider's worker"))
        }
        guard let plugin, plugin.failure == nil else {
            return .failed(PluginCallError(status: Int32(BERTH_ERR_CRASHED), message: "\(key): its provider \(provider) crashed or stopped"))
        }
        let group = plugin.group
        let channel = group.worker.channel
        let job: @Sendable () -> Result<[UInt8], PluginCallError> = {
            let reply: Result<IsolationReply, ChannelError>
            do throws(ChannelError) { reply = .success(try channel.call(.serviceInvoke(instance: token, request: request))) } catch { reply = .failure(error) }
            return ContractCalls.answer(reply, provider: provider, contract: key)
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
            call = { @MainActor [self] (instance: ScopedValue, request: [UInt8]) -> ContractRoute in
                contractRoute(key: key, instance: instance, request: request)
            }
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
                if Self.isOnMainActor {
                    MainActor.assumeIsolated { plugin?.releaseServiceInstance(instance) }
                } else {
                    // Before the worker's next call, so it never answers with this instance.
                    endedOffMain.withLock { $0.append(instance) }
                    hops.post { self.plugin?.group.releaseEndedOffMain() }
                }
            }
        )
    }
}
