import Foundation
internal import CBerth

/// The C side of `berth_host_v1` in process: each function checks the thread rule, turns
/// its C arguments into Swift values, and calls `HostCallbacks` (the same calls a
/// worker's requests become). Services and managed tasks hand the host C function
/// pointers, so they are served here directly (BerthHost+Scopes, Interactor).
enum HostServices {
    typealias ErrorPointer = UnsafeMutablePointer<berth_error>?

    /// Runs a main-thread host function with its C arguments. berth.h documents these
    /// functions as main-thread-only, so the arguments (raw pointers, not Sendable) never
    /// leave the thread they arrived on; the box only carries them into the main actor's
    /// isolation, which `assumeIsolated` checks at run time.
    static func onMainThread<Arguments>(_ arguments: Arguments, error: ErrorPointer = nil, _ body: @escaping @MainActor (Arguments) -> berth_status) -> berth_status {
        // A plugin that breaks the thread rule gets an error, not a crashed host.
        guard HostCall.isInside else {
            return fill(error, BERTH_ERR_STATE, "this host function may only be called on the main thread, during a call from the host")
        }
        let box = MainThreadArguments(value: arguments)
        // On a plugin's lane the main actor answers while the lane waits.
        let call = MainThreadCall(body: body, arguments: box)
        return LaneHop.toMain { call.body(call.arguments.value) }
    }

    static func fill(_ error: ErrorPointer, _ code: Int, _ message: String) -> berth_status {
        BerthErrorBuffer.fill(error, code: berth_status(code), message: message)
    }

    /// The handle's screen, for a main-thread call (the handle is valid from create to destroy).
    @MainActor
    private static func handle(_ pointer: OpaquePointer?) -> ScreenHandle? {
        ScreenHandle.from(pointer)
    }

    /// The host side of the seam (stateless: each call finds its screen through the handle).
    @MainActor static var callbacks: HostCallbackHandler { HostCallbackHandler() }

    /// The capability check of a plugin-wide or pointer-carrying call: nil when granted,
    /// else the refusal written into `error` (and reported by the host).
    @MainActor
    static func refusal(_ grant: CapabilityGrant, host: (any PluginFacingHost)?, _ capability: Capability, _ call: String, _ error: ErrorPointer) -> berth_status? {
        guard case .failure(let refusal) = callbacks.permit(grant, host: host, capability, call: call) else { return nil }
        return fill(error, Int(refusal.code.rawValue), refusal.message)
    }

    /// Writes a refusal into the plugin's error buffer and returns its status.
    static func refuse(_ refusal: HostRefusal, _ error: ErrorPointer) -> berth_status {
        fill(error, Int(refusal.code.rawValue), refusal.message)
    }

    static func answer(_ result: Result<Void, HostRefusal>, _ error: ErrorPointer) -> berth_status {
        switch result {
        case .success: berth_status(BERTH_OK)
        case .failure(let refusal): refuse(refusal, error)
        }
    }

    private static func string(_ pointer: UnsafePointer<CChar>?) -> String? {
        pointer.map { String(cString: $0) }
    }

    static func navigate(
        _ pointer: OpaquePointer?, _ kind: Int32, _ route: UnsafePointer<CChar>?, _ argument: berth_bytes,
        _ outID: UnsafeMutablePointer<UInt64>?, _ error: ErrorPointer
    ) -> berth_status {
        onMainThread((pointer, kind, route, argument, outID, error), error: error) { pointer, kind, route, argument, outID, error in
            guard let screen = handle(pointer) else { return fill(error, BERTH_ERR_NOT_FOUND, "navigate: the screen handle is not an open screen") }
            let request: NavigationRequest
            do throws(HostRefusal) { request = try NavigationRequest(kind: kind, route: string(route)) } catch let refusal { return refuse(refusal, error) }
            switch callbacks.navigate(screen, request, argument: argument.copied) {
            case .success(let id):
                if let id { outID?.pointee = UInt64(id) }
                return berth_status(BERTH_OK)
            case .failure(let refusal):
                return refuse(refusal, error)
            }
        }
    }

    static func observeDelegate(_ pointer: OpaquePointer?, _ childID: UInt64, _ error: ErrorPointer) -> berth_status {
        onMainThread((pointer, childID, error), error: error) { pointer, childID, error in
            guard let screen = handle(pointer) else { return fill(error, BERTH_ERR_NOT_FOUND, "observe_delegate: the screen handle is not an open screen") }
            return answer(callbacks.observeDelegate(screen, child: Int(childID)), error)
        }
    }

    static func sendDelegate(_ pointer: OpaquePointer?, _ action: UnsafePointer<CChar>?, _ payload: berth_bytes, _ error: ErrorPointer) -> berth_status {
        onMainThread((pointer, action, payload, error), error: error) { pointer, action, payload, error in
            guard let screen = handle(pointer) else { return fill(error, BERTH_ERR_NOT_FOUND, "send_delegate: the screen handle is not an open screen") }
            guard let action = string(action) else { return fill(error, BERTH_ERR_INVALID_ARGUMENT, "send_delegate: action is NULL") }
            return answer(callbacks.sendDelegate(screen, action: action, payload: payload.copied), error)
        }
    }

    // MARK: State storage

    static func stateRead(_ pointer: OpaquePointer?, _ identity: UnsafePointer<CChar>?, _ index: UInt32, _ fingerprint: UInt64,
                          _ out: UnsafePointer<berth_sink>?, _ error: ErrorPointer) -> berth_status {
        onMainThread((pointer, identity, index, fingerprint, out, error), error: error) { pointer, identity, index, fingerprint, out, error in
            guard let screen = handle(pointer) else { return fill(error, BERTH_ERR_NOT_FOUND, "state_read: the screen handle is not an open screen") }
            guard let identity = string(identity) else { return fill(error, BERTH_ERR_INVALID_ARGUMENT, "state_read: identity is NULL") }
            switch callbacks.stateRead(screen, identity: identity, index: index, fingerprint: fingerprint) {
            case .success(let bytes?): return SinkBuffer.write(bytes, to: out)
            case .success(nil): return berth_status(BERTH_ERR_NOT_FOUND)
            case .failure(let refusal): return refuse(refusal, error)
            }
        }
    }

    static func stateWrite(_ pointer: OpaquePointer?, _ identity: UnsafePointer<CChar>?, _ index: UInt32, _ fingerprint: UInt64,
                           _ value: berth_bytes, _ error: ErrorPointer) -> berth_status {
        onMainThread((pointer, identity, index, fingerprint, value, error), error: error) { pointer, identity, index, fingerprint, value, error in
            guard let screen = handle(pointer) else { return fill(error, BERTH_ERR_NOT_FOUND, "state_write: the screen handle is not an open screen") }
            guard let identity = string(identity) else { return fill(error, BERTH_ERR_INVALID_ARGUMENT, "state_write: identity is NULL") }
            return answer(callbacks.stateWrite(screen, identity: identity, index: index, fingerprint: fingerprint, value: value.copied), error)
        }
    }

    static func persistRead(_ pointer: OpaquePointer?, _ key: UnsafePointer<CChar>?, _ out: UnsafePointer<berth_sink>?, _ error: ErrorPointer) -> berth_status {
        onMainThread((pointer, key, out, error), error: error) { pointer, key, out, error in
            guard let screen = handle(pointer) else { return fill(error, BERTH_ERR_NOT_FOUND, "persist_read: the screen handle is not an open screen") }
            guard let key = string(key) else { return fill(error, BERTH_ERR_INVALID_ARGUMENT, "persist_read: key is NULL") }
            switch callbacks.persistRead(screen, key: key) {
            case .success(let bytes?): return SinkBuffer.write(bytes, to: out)
            case .success(nil): return berth_status(BERTH_ERR_NOT_FOUND)
            case .failure(let refusal): return refuse(refusal, error)
            }
        }
    }

    static func persistWrite(_ pointer: OpaquePointer?, _ key: UnsafePointer<CChar>?, _ value: berth_bytes, _ error: ErrorPointer) -> berth_status {
        onMainThread((pointer, key, value, error), error: error) { pointer, key, value, error in
            guard let screen = handle(pointer) else { return fill(error, BERTH_ERR_NOT_FOUND, "persist_write: the screen handle is not an open screen") }
            guard let key = string(key) else { return fill(error, BERTH_ERR_INVALID_ARGUMENT, "persist_write: key is NULL") }
            return answer(callbacks.persistWrite(screen, key: key, value: value.copied), error)
        }
    }

    // MARK: Route context

    static func contextObserve(_ pointer: OpaquePointer?, _ type: UnsafePointer<CChar>?, _ error: ErrorPointer) -> berth_status {
        onMainThread((pointer, type, error), error: error) { pointer, type, error in
            guard let screen = handle(pointer) else { return fill(error, BERTH_ERR_NOT_FOUND, "context_observe: the screen handle is not an open screen") }
            return answer(callbacks.contextObserve(screen, type: string(type) ?? ""), error)
        }
    }

    static func contextUnobserve(_ pointer: OpaquePointer?, _ type: UnsafePointer<CChar>?, _ error: ErrorPointer) -> berth_status {
        onMainThread((pointer, type, error), error: error) { pointer, type, _ in
            if let screen = handle(pointer), let type = string(type) { callbacks.contextUnobserve(screen, type: type) }
            return berth_status(BERTH_OK)
        }
    }

    static func contextSend(_ pointer: OpaquePointer?, _ type: UnsafePointer<CChar>?, _ payload: berth_bytes, _ mode: Int32, _ error: ErrorPointer) -> berth_status {
        onMainThread((pointer, type, payload, mode, error), error: error) { pointer, type, payload, mode, error in
            guard let screen = handle(pointer) else { return fill(error, BERTH_ERR_NOT_FOUND, "context_send: the screen handle is not an open screen") }
            return answer(callbacks.contextSend(screen, type: string(type) ?? "", payload: payload.copied, terminate: mode == BERTH_CONTEXT_TERMINATE), error)
        }
    }

    static func contextCanTerminate(_ pointer: OpaquePointer?, _ type: UnsafePointer<CChar>?) -> Int32 {
        // A boolean answer: off the host's thread it is "no", never the refusal status.
        guard HostCall.isInside else { return 0 }
        return onMainThread((pointer, type)) { pointer, type in
            guard let screen = handle(pointer), let type = string(type) else { return 0 }
            return callbacks.contextCanTerminate(screen, type: type) ? 1 : 0
        }
    }

    // MARK: Managed tasks

    static func taskStart(_ handle: OpaquePointer?, _ key: UnsafePointer<CChar>?, _ task: UnsafePointer<berth_task_v1>?, _ error: ErrorPointer) -> berth_status {
        onMainThread((handle, key, task, error), error: error) { handle, key, task, error in
            guard let task else { return fill(error, BERTH_ERR_INVALID_ARGUMENT, "task_start: task is NULL") }
            var descriptor = berth_task_v1()
            withUnsafeMutableBytes(of: &descriptor) { target in
                let size = min(Int(task.pointee.struct_size), target.count)
                target.copyMemory(from: UnsafeRawBufferPointer(start: task, count: size))
            }
            guard let key, let screen = ScreenHandle.from(handle), let module = screen.module, let router = module.router, let host = screen.host,
                  let interactor = router.interactor else {
                ManagedTask.releaseUnstarted(descriptor)
                return fill(error, BERTH_ERR_STATE, "task_start: the screen is not open")
            }
            if let denied = refusal(screen.grant, host: host, .tasks, "task_start", error) {
                ManagedTask.releaseUnstarted(descriptor)
                return denied
            }
            let name = String(cString: key)
            do throws(ScreenError) {
                try interactor.startTask(key: name, descriptor: descriptor)
                host.emit(.event, .screen(router.id), "task '\(name)' started")
                return berth_status(BERTH_OK)
            } catch let refusal {
                return fill(error, BERTH_ERR_STATE, refusal.message)
            }
        }
    }

    static func taskCancel(_ handle: OpaquePointer?, _ key: UnsafePointer<CChar>?) -> berth_status {
        onMainThread((handle, key)) { handle, key in
            guard let key, let router = ScreenHandle.from(handle)?.module?.router else { return berth_status(BERTH_OK) }
            router.interactor?.cancelTask(key: String(cString: key))
            return berth_status(BERTH_OK)
        }
    }

    static func taskPost(_ handle: OpaquePointer?, _ action: UnsafePointer<CChar>?, _ payload: berth_bytes) -> berth_status {
        guard let task = ManagedTask.from(handle: handle), let action else { return berth_status(BERTH_ERR_INVALID_ARGUMENT) }
        guard !task.isCancelled else { return berth_status(BERTH_ERR_CANCELLED) }
        let name = String(cString: action)
        let bytes = payload.copied
        task.hops?.post {
            // Dropped when the task was cancelled since (deactivation, cancelEffect, a
            // restart under the same key) or the screen is no longer active.
            guard !task.isCancelled, let handle = task.owner?.module.screenHandle else { return }
            HostCallbackHandler().taskPost(handle, action: name, payload: bytes)
        }
        return berth_status(BERTH_OK)
    }
}

/// See `HostServices.onMainThread`: arguments of a main-thread C call, used on that thread only.
struct MainThreadArguments<Value>: @unchecked Sendable {
    let value: Value
}

/// A main-thread host function and its arguments, carried to the main actor while the lane
/// that called it waits (so nothing of it is used from two threads at once).
private struct MainThreadCall<Arguments>: @unchecked Sendable {
    let body: @MainActor (Arguments) -> berth_status
    let arguments: MainThreadArguments<Arguments>
}

extension berth_bytes {
    /// A copy of the borrowed bytes.
    var copied: [UInt8] {
        guard let data, length > 0 else { return [] }
        return Array(UnsafeBufferPointer(start: data, count: Int(length)))
    }
}
