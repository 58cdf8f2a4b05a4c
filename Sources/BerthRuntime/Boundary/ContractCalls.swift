@_spi(Engine) import BerthCore
internal import CBerth
import Foundation

/// How the host reaches a contract's provider for one call, decided on the main actor while
/// the consumer's lane waits for the resolve (`ContractCalls.call`): the instance its scope
/// holds and the request's bytes in, the way to the provider's lane out.
typealias ContractCall = @MainActor @Sendable (_ instance: ScopedValue, _ request: [UInt8], _ timeout: Duration) -> ContractRoute

/// One call's way to its provider.
enum ContractRoute: Sendable {
    /// The provider's code may run on the consumer's thread now: it is the provider's own
    /// lane (the same plugin or worker group: the call nests, as on one stack), or the main
    /// thread with the provider's lane free (a blocking call from an embedding app).
    case here(@Sendable () -> Result<[UInt8], PluginCallError>)
    /// The main actor started the call on the provider's lane; the consumer waits for `done`.
    case started(ContractReply)
    case failed(PluginCallError)
}

/// Where a call started on another lane leaves its answer for the consumer's thread.
final class ContractReply: Sendable {
    private let answer = LockedCondition<Result<[UInt8], PluginCallError>?>(nil)

    func finish(_ result: Result<[UInt8], PluginCallError>) {
        answer.withLock { if $0 == nil { $0 = result } }
        answer.broadcast()
    }

    /// The answer, or `timedOut` naming the provider once `timeout` passed (the call may
    /// still run on its lane: its answer is then dropped).
    func wait(timeout: Duration, provider: String, contract: String) -> Result<[UInt8], PluginCallError> {
        let deadline = ContinuousClock.now + timeout
        let result = answer.wait { value, _ -> LockedCondition<Result<[UInt8], PluginCallError>?>.Decision<Result<[UInt8], PluginCallError>?> in
            if let value { return .finish(value) }
            return ContinuousClock.now >= deadline ? .finish(nil) : .waitUntil(deadline)
        }
        return result ?? .failure(ContractCalls.timedOut(provider: provider, contract: contract, after: timeout))
    }
}

/// An in-process provider's instance of a contract. A release while a call runs waits for
/// the call's end (the call then releases it), so a call never reaches a released instance.
final class ContractInstance: Sendable {
    private struct State {
        var calls = 0
        var released = false
        var releaseAfterCalls = false
    }

    private let pointer: ServiceContext
    private let declaration: ServiceDeclaration
    private let state = Locked(State())

    init(pointer: UnsafeMutableRawPointer, declaration: ServiceDeclaration) {
        self.pointer = ServiceContext(pointer: pointer)
        self.declaration = declaration
    }

    /// One call on the calling thread (the provider's lane).
    func invoke(_ request: [UInt8]) -> Result<[UInt8], PluginCallError> {
        let live = state.withLock { state -> Bool in
            guard !state.released, !state.releaseAfterCalls else { return false }
            state.calls += 1
            return true
        }
        guard live, let instance = pointer.pointer else {
            return .failure(ContractCalls.unavailable(declaration.key, "its scope ended before the call"))
        }
        let result = declaration.invoke(instance, request: request)
        let releaseNow = state.withLock { state -> Bool in
            state.calls -= 1
            guard state.calls == 0, state.releaseAfterCalls, !state.released else { return false }
            state.released = true
            return true
        }
        if releaseNow { declaration.release(instance) }
        return result
    }

    /// The scope ended: the provider's `release`, now or after the calls running.
    func release() {
        let releaseNow = state.withLock { state -> Bool in
            guard !state.released else { return false }
            if state.calls > 0 {
                state.releaseAfterCalls = true
                return false
            }
            state.released = true
            return true
        }
        if releaseNow, let instance = pointer.pointer { declaration.release(instance) }
    }
}

/// Contract calls (ABI 1.2 `service_call`): a plugin calls a service another plugin provides,
/// in any process. The consumer's lane waits; the main actor only resolves the instance (in
/// the consumer's scopes, as `service_resolve` does) and starts the call on the provider's
/// lane; the provider answers there. A provider that crashes, is unloaded or does not answer
/// in time fails the call with a status naming it (`BERTH_ERR_CRASHED`, `_UNAVAILABLE`,
/// `_TIMED_OUT`); the consumer and its screens go on.
enum ContractCalls {
    /// One call from a consumer's thread (its lane, or the main thread for a blocking call).
    /// `resolve` runs on the main actor: the instance and the way to it, or the refusal.
    static func call(key: String, request: [UInt8], from handle: ScreenHandle, consumer: String,
                     resolve: @escaping @MainActor () -> Result<(ScopedValue, ContractCall, provider: String, timeout: Duration), PluginCallError>) -> Result<[UInt8], PluginCallError> {
        let result = route(key: key, request: request, resolve: resolve)
        // A failed call is the host's event too, not only the consumer's status (a denial
        // has its own event already).
        if case .failure(let failure) = result, failure.status != Int32(BERTH_ERR_DENIED) {
            // The host's messages name the contract already; a provider's own error may not.
            let line = failure.message.contains(key) ? failure.message : "\(key): \(failure.message)"
            handle.hops.post { handle.host?.emit(.event, .plugin(consumer), "a contract call failed: \(line)") }
        }
        return result
    }

    private static func route(key: String, request: [UInt8],
                              resolve: @escaping @MainActor () -> Result<(ScopedValue, ContractCall, provider: String, timeout: Duration), PluginCallError>) -> Result<[UInt8], PluginCallError> {
        let (route, provider, timeout) = LaneHop.toMain { () -> (ContractRoute, String, Duration) in
            switch resolve() {
            case .success(let (instance, call, provider, timeout)): return (call(instance, request, timeout), provider, timeout)
            case .failure(let refusal): return (.failed(refusal), "", .zero)
            }
        }
        switch route {
        case .here(let job): return job()
        // A worker provider's own channel times out first (at `timeout`), naming its worker;
        // the wait's margin covers the main actor's bookkeeping after it.
        case .started(let reply): return reply.wait(timeout: timeout + .seconds(1), provider: provider, contract: key)
        case .failed(let refusal): return .failure(refusal)
        }
    }

    /// The route to a provider on `lane`, decided on the main actor during the consumer's hop.
    @MainActor
    static func route(to lane: LaneState, provider: String, contract: String,
                      job: @escaping @Sendable () -> Result<[UInt8], PluginCallError>,
                      returned: @escaping @MainActor (Result<[UInt8], PluginCallError>) -> Void = { _ in }) -> ContractRoute {
        // The consumer runs on the provider's lane (same plugin, same group): nest there.
        if LaneHop.answering === lane.lane { return .here(job) }
        // A blocking call on the main thread (no lane waits): the provider's code runs here
        // when its lane is free, as every blocking call does.
        if LaneHop.answering == nil {
            // The consumer's code runs in a synchronous call: it waits for a post as that call does.
            lane.waitForHostCall()
            if let busy = lane.callInTheWay { return .failed(PluginCallError.busy(provider, busy)) }
            return .here(job)
        }
        let reply = ContractReply()
        let call = RunningPluginCall.Call(plugin: provider, route: contract, screen: 0, function: "contract call '\(contract)'")
        lane.runWhenFree(call, job, answered: { reply.finish($0) }, returned: returned)
        return .started(reply)
    }

    /// The call of an in-process provider's instance, on its lane.
    static func invoke(_ instance: ScopedValue, key: String, request: [UInt8]) -> Result<[UInt8], PluginCallError> {
        guard case .object(let object) = instance, let contract = object as? ContractInstance else {
            return .failure(PluginCallError(status: Int32(BERTH_ERR_STATE), message: "service_call \(key): not an instance of its provider"))
        }
        return contract.invoke(request)
    }

    /// A worker provider's answer, or the failure its channel's end means (`crash` words a
    /// worker that died: its signal and fatal line).
    static func answer(_ result: Result<IsolationReply, ChannelError>, provider: String, contract: String,
                       crash: (ChannelError) -> String = { $0.message }) -> Result<[UInt8], PluginCallError> {
        switch result {
        case .success(.bytes(let status, let bytes)) where status.isOK: return .success(bytes)
        case .success(let reply): return .failure(PluginCallError(status: Int32(reply.status.code), message: reply.status.message))
        case .failure(let error) where error.code == .timedOut:
            return .failure(PluginCallError(status: Int32(BERTH_ERR_TIMED_OUT), message: "\(contract): its provider \(provider) did not answer in time (\(error.message))"))
        case .failure(let error):
            return .failure(PluginCallError(status: Int32(BERTH_ERR_CRASHED), message: "\(contract): its provider \(provider) crashed (\(crash(error)))"))
        }
    }

    static func unavailable(_ contract: String, _ why: String) -> PluginCallError {
        PluginCallError(status: Int32(BERTH_ERR_UNAVAILABLE), message: "\(contract): \(why)")
    }

    /// The consumer's own wait ran out: worded as a worker provider's timed-out channel is,
    /// so one prefix tells a consumer its call timed out, whichever deadline came first.
    static func timedOut(provider: String, contract: String, after timeout: Duration) -> PluginCallError {
        PluginCallError(status: Int32(BERTH_ERR_TIMED_OUT), message: "\(contract): its provider \(provider) did not answer in time (waited \(timeout))")
    }
}
