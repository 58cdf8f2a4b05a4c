import Foundation
internal import CBerth

/// The host-table functions behind navigation, delegate actions and managed tasks: each
/// finds the screen from its handle, checks what berth.h promises, and either acts or
/// queues the work until the host is back at top level (a plugin is never re-entered in
/// the middle of its own call).
enum HostServices {
    typealias ErrorPointer = UnsafeMutablePointer<berth_error>?

    /// Runs a main-thread host function with its C arguments. berth.h documents these
    /// functions as main-thread-only, so the arguments (raw pointers, not Sendable) never
    /// leave the thread they arrived on; the box only carries them into the main actor's
    /// isolation, which `assumeIsolated` checks at run time.
    static func onMainThread<Arguments>(_ arguments: Arguments, error: ErrorPointer = nil, _ body: @MainActor (Arguments) -> berth_status) -> berth_status {
        // A plugin that breaks the thread rule gets an error, not a crashed host.
        guard HostCall.isInside else {
            return fill(error, BERTH_ERR_STATE, "this host function may only be called on the main thread, during a call from the host")
        }
        let box = MainThreadArguments(value: arguments)
        return MainActor.assumeIsolated { body(box.value) }
    }

    static func fill(_ error: ErrorPointer, _ code: Int, _ message: String) -> berth_status {
        BerthErrorBuffer.fill(error, code: berth_status(code), message: message)
    }

    /// The router a handle names, also while its instance is still being created.
    @MainActor
    static func router(_ handle: OpaquePointer?) -> (router: Router, host: BerthHost)? {
        guard let screenHandle = ScreenHandle.from(handle), let router = screenHandle.router, let host = screenHandle.host,
              !router.isReleased
        else { return nil }
        return (router, host)
    }

    /// The screen a handle names, when it is open and its host is alive.
    @MainActor
    static func screen(_ handle: OpaquePointer?) -> (module: ModuleInstance, router: Router, host: BerthHost)? {
        guard let module = ScreenHandle.from(handle)?.module, let router = module.router, let host = module.host else { return nil }
        return (module, router, host)
    }

    static func navigate(
        _ handle: OpaquePointer?, _ kind: Int32, _ route: UnsafePointer<CChar>?, _ argument: berth_bytes,
        _ outID: UnsafeMutablePointer<UInt64>?, _ error: ErrorPointer
    ) -> berth_status {
        onMainThread((handle, kind, route, argument, outID, error), error: error) { handle, kind, route, argument, outID, error in
            guard let (module, router, host) = screen(handle) else {
                return fill(error, BERTH_ERR_NOT_FOUND, "navigate: the screen handle is not an open screen")
            }
            guard module.isActive else {
                return fill(error, BERTH_ERR_STATE, "navigate: screen \(router.id) is \(module.state); only active screens navigate")
            }
            let bytes = argument.copied
            switch Int(kind) {
            case Int(BERTH_NAVIGATE_PUSH), Int(BERTH_NAVIGATE_PRESENT):
                guard let route, !String(cString: route).isEmpty else {
                    return fill(error, BERTH_ERR_INVALID_ARGUMENT, "navigate: a route is required to push or present")
                }
                let target = String(cString: route)
                let id = host.takeRouterID()
                outID?.pointee = UInt64(id)
                let present = kind == BERTH_NAVIGATE_PRESENT
                host.enqueue { [weak host, weak router] in
                    guard let host, let router, !router.isReleased else { return }
                    host.performRequestedOpen(target, argument: bytes, from: router, id: id, present: present)
                }
                return berth_status(BERTH_OK)
            case Int(BERTH_NAVIGATE_POP):
                guard let stack = router.stack, stack.routers.first !== router || stack.isPresented else {
                    return fill(error, BERTH_ERR_STATE, "navigate: screen \(router.id) is the launch root; there is nothing to pop back to")
                }
                host.enqueue { [weak host, weak router] in
                    guard let host, let router else { return }
                    host.close(router)
                }
                return berth_status(BERTH_OK)
            case Int(BERTH_NAVIGATE_DISMISS):
                guard let stack = router.stack, stack.isPresented, let root = stack.routers.first else {
                    return fill(error, BERTH_ERR_STATE, "navigate: screen \(router.id) is not in a presented stack; nothing to dismiss")
                }
                host.enqueue { [weak host, weak root] in
                    guard let host, let root else { return }
                    host.deactivateDetachAndDismiss(root)
                }
                return berth_status(BERTH_OK)
            case Int(BERTH_NAVIGATE_POP_TO_ROOT):
                guard let stack = router.stack, stack.routers.count > 1 else {
                    return fill(error, BERTH_ERR_STATE, "navigate: screen \(router.id)'s stack has nothing above its root")
                }
                let above = stack.routers[1]
                host.enqueue { [weak host, weak above] in
                    guard let host, let above else { return }
                    host.deactivateDetachAndPop(above)
                }
                return berth_status(BERTH_OK)
            default:
                return fill(error, BERTH_ERR_INVALID_ARGUMENT, "navigate: unknown kind \(kind)")
            }
        }
    }

    static func observeDelegate(_ handle: OpaquePointer?, _ childID: UInt64, _ error: ErrorPointer) -> berth_status {
        onMainThread((handle, childID, error), error: error) { handle, childID, error in
            guard let (module, router, host) = screen(handle) else {
                return fill(error, BERTH_ERR_NOT_FOUND, "observe_delegate: the screen handle is not an open screen")
            }
            guard module.isActive else {
                return fill(error, BERTH_ERR_STATE, "observe_delegate: screen \(router.id) is \(module.state)")
            }
            // The child may still be queued (a push requested in this same call).
            host.enqueue { [weak host, weak router] in
                guard let host, let router, !router.isReleased else { return }
                do throws(ScreenError) {
                    try host.observeDelegate(of: Int(childID), by: router)
                } catch {
                    host.emit(.failed, "screen \(router.id)", error.message)
                }
            }
            return berth_status(BERTH_OK)
        }
    }

    static func sendDelegate(_ handle: OpaquePointer?, _ action: UnsafePointer<CChar>?, _ payload: berth_bytes, _ error: ErrorPointer) -> berth_status {
        onMainThread((handle, action, payload, error), error: error) { handle, action, payload, error in
            guard let (module, router, host) = screen(handle) else {
                return fill(error, BERTH_ERR_NOT_FOUND, "send_delegate: the screen handle is not an open screen")
            }
            guard module.isActive else {
                return fill(error, BERTH_ERR_STATE, "send_delegate: screen \(router.id) is \(module.state)")
            }
            guard let action else { return fill(error, BERTH_ERR_INVALID_ARGUMENT, "send_delegate: action is NULL") }
            let name = String(cString: action)
            let bytes = payload.copied
            host.enqueue { [weak host, weak router] in
                guard let host, let router, !router.isReleased else { return }
                host.deliverDelegate(from: router, action: name, payload: bytes)
            }
            return berth_status(BERTH_OK)
        }
    }

    // MARK: State storage

    static func stateRead(_ handle: OpaquePointer?, _ identity: UnsafePointer<CChar>?, _ index: UInt32, _ fingerprint: UInt64,
                          _ out: UnsafePointer<berth_sink>?, _ error: ErrorPointer) -> berth_status {
        onMainThread((handle, identity, index, fingerprint, out, error), error: error) { handle, identity, index, fingerprint, out, error in
            guard let module = ScreenHandle.from(handle)?.module, !module.isReleased else {
                return fill(error, BERTH_ERR_NOT_FOUND, "state_read: the screen handle is not an open screen")
            }
            guard let identity else { return fill(error, BERTH_ERR_INVALID_ARGUMENT, "state_read: identity is NULL") }
            guard let bytes = module.stateStorage.read(identity: String(cString: identity), index: index, fingerprint: fingerprint) else {
                return berth_status(BERTH_ERR_NOT_FOUND)
            }
            return SinkBuffer.write(bytes, to: out)
        }
    }

    static func stateWrite(_ handle: OpaquePointer?, _ identity: UnsafePointer<CChar>?, _ index: UInt32, _ fingerprint: UInt64,
                           _ value: berth_bytes, _ error: ErrorPointer) -> berth_status {
        onMainThread((handle, identity, index, fingerprint, value, error), error: error) { handle, identity, index, fingerprint, value, error in
            guard let module = ScreenHandle.from(handle)?.module, !module.isReleased else {
                return fill(error, BERTH_ERR_NOT_FOUND, "state_write: the screen handle is not an open screen")
            }
            guard let identity else { return fill(error, BERTH_ERR_INVALID_ARGUMENT, "state_write: identity is NULL") }
            module.stateStorage.write(identity: String(cString: identity), index: index, fingerprint: fingerprint, bytes: value.copied)
            return berth_status(BERTH_OK)
        }
    }

    static func persistRead(_ handle: OpaquePointer?, _ key: UnsafePointer<CChar>?, _ out: UnsafePointer<berth_sink>?, _ error: ErrorPointer) -> berth_status {
        onMainThread((handle, key, out, error), error: error) { handle, key, out, error in
            switch persistTarget(handle, key, error, verb: "persist_read") {
            case .failure(let failure): return failure.status
            case .success(let (store, plugin, name)):
                do {
                    guard let bytes = try store.read(plugin: plugin, key: name) else { return berth_status(BERTH_ERR_NOT_FOUND) }
                    return SinkBuffer.write(bytes, to: out)
                } catch let failure {
                    return fill(error, BERTH_ERR_FAILED, "persist_read \(plugin)/\(name): \(failure)")
                }
            }
        }
    }

    static func persistWrite(_ handle: OpaquePointer?, _ key: UnsafePointer<CChar>?, _ value: berth_bytes, _ error: ErrorPointer) -> berth_status {
        onMainThread((handle, key, value, error), error: error) { handle, key, value, error in
            switch persistTarget(handle, key, error, verb: "persist_write") {
            case .failure(let failure): return failure.status
            case .success(let (store, plugin, name)):
                do {
                    try store.write(plugin: plugin, key: name, value: value.copied)
                    return berth_status(BERTH_OK)
                } catch let failure {
                    return fill(error, BERTH_ERR_FAILED, "persist_write \(plugin)/\(name) failed, nothing was saved: \(failure)")
                }
            }
        }
    }

    /// The store, plugin and key of a persist call, after the checks: an open screen, a
    /// key the manifest's `persist` list declares, persistence on.
    @MainActor
    private static func persistTarget(_ handle: OpaquePointer?, _ key: UnsafePointer<CChar>?, _ error: ErrorPointer, verb: String)
        -> Result<(PersistentStore, String, String), PersistFailure> {
        guard let (router, host) = router(handle) else {
            return .failure(PersistFailure(fill(error, BERTH_ERR_NOT_FOUND, "\(verb): the screen handle is not an open screen")))
        }
        guard let key else { return .failure(PersistFailure(fill(error, BERTH_ERR_INVALID_ARGUMENT, "\(verb): key is NULL"))) }
        let name = String(cString: key)
        let plugin = router.pluginID
        guard host.plugins[plugin]?.source.manifest.persist.contains(name) == true else {
            return .failure(PersistFailure(fill(error, BERTH_ERR_INVALID_ARGUMENT, "\(verb): key '\(name)' is not in \(plugin)'s manifest persist list")))
        }
        guard let store = host.persistentStore else {
            let reason: String
            switch host.persistenceStatus {
            case .failed(let why): reason = "persistence is off (\(why))"
            case .disabled, .on: reason = "persistence is off (no state folder)"
            }
            return .failure(PersistFailure(fill(error, BERTH_ERR_FAILED, "\(verb) \(plugin)/\(name): \(reason)")))
        }
        return .success((store, plugin, name))
    }

    struct PersistFailure: Error {
        let status: berth_status
        init(_ status: berth_status) { self.status = status }
    }

    // MARK: Route context

    static func contextObserve(_ handle: OpaquePointer?, _ type: UnsafePointer<CChar>?, _ error: ErrorPointer) -> berth_status {
        onMainThread((handle, type, error), error: error) { handle, type, error in
            guard let (router, host) = router(handle) else {
                return fill(error, BERTH_ERR_NOT_FOUND, "context_observe: the screen handle is not an open screen")
            }
            guard let type, !String(cString: type).isEmpty else {
                return fill(error, BERTH_ERR_INVALID_ARGUMENT, "context_observe: the context type is empty")
            }
            host.addScreenContextObserver(String(cString: type), on: router)
            return berth_status(BERTH_OK)
        }
    }

    static func contextUnobserve(_ handle: OpaquePointer?, _ type: UnsafePointer<CChar>?, _ error: ErrorPointer) -> berth_status {
        onMainThread((handle, type, error), error: error) { handle, type, error in
            guard let type, let (router, host) = router(handle) else { return berth_status(BERTH_OK) }
            host.removeScreenContextObserver(String(cString: type), on: router)
            return berth_status(BERTH_OK)
        }
    }

    static func contextSend(_ handle: OpaquePointer?, _ type: UnsafePointer<CChar>?, _ payload: berth_bytes, _ mode: Int32, _ error: ErrorPointer) -> berth_status {
        onMainThread((handle, type, payload, mode, error), error: error) { handle, type, payload, mode, error in
            guard let (module, router, host) = screen(handle) else {
                return fill(error, BERTH_ERR_NOT_FOUND, "context_send: the screen handle is not an open screen")
            }
            guard let type, !String(cString: type).isEmpty else {
                return fill(error, BERTH_ERR_INVALID_ARGUMENT, "context_send: the context type is empty")
            }
            let name = String(cString: type)
            guard module.isActive else {
                host.emit(.failed, "screen \(router.id)", "context \(name) not sent: the sending screen is \(module.state)")
                return fill(error, BERTH_ERR_STATE, "context_send: screen \(router.id) is \(module.state); \(name) was not sent")
            }
            let bytes = payload.copied
            let terminate = mode == BERTH_CONTEXT_TERMINATE
            host.enqueue { [weak host, weak router] in
                guard let host, let router, !router.isReleased else { return }
                if terminate {
                    host.terminate(name, payload: bytes, from: router)
                } else {
                    host.sendContext(name, payload: bytes, from: router)
                }
            }
            return berth_status(BERTH_OK)
        }
    }

    static func contextCanTerminate(_ handle: OpaquePointer?, _ type: UnsafePointer<CChar>?) -> Int32 {
        // A boolean answer: off the host's thread it is "no", never the refusal status.
        guard HostCall.isInside else { return 0 }
        let status = onMainThread((handle, type)) { handle, type in
            guard let type, let (_, router, host) = screen(handle) else { return berth_status(0) }
            return host.canTerminate(String(cString: type), from: router) ? 1 : 0
        }
        return status
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
            guard let key, let (_, router, host) = screen(handle), let interactor = router.interactor else {
                ManagedTask.releaseUnstarted(descriptor)
                return fill(error, BERTH_ERR_STATE, "task_start: the screen is not open")
            }
            let name = String(cString: key)
            do throws(ScreenError) {
                try interactor.startTask(key: name, descriptor: descriptor)
                host.emit(.event, "screen \(router.id)", "task '\(name)' started")
                return berth_status(BERTH_OK)
            } catch let refusal {
                return fill(error, BERTH_ERR_STATE, refusal.message)
            }
        }
    }

    static func taskCancel(_ handle: OpaquePointer?, _ key: UnsafePointer<CChar>?) -> berth_status {
        onMainThread((handle, key)) { handle, key in
            guard let key, let (_, router, _) = screen(handle) else { return berth_status(BERTH_OK) }
            router.interactor?.cancelTask(key: String(cString: key))
            return berth_status(BERTH_OK)
        }
    }

    static func taskPost(_ handle: OpaquePointer?, _ action: UnsafePointer<CChar>?, _ payload: berth_bytes) -> berth_status {
        guard let task = ManagedTask.from(handle: handle), let action else { return berth_status(BERTH_ERR_INVALID_ARGUMENT) }
        guard !task.isCancelled else { return berth_status(BERTH_ERR_CANCELLED) }
        let name = String(cString: action)
        let bytes = payload.copied
        Task { @MainActor in
            // Dropped when the task was cancelled since (deactivation, cancelEffect, a
            // restart under the same key) or the screen is no longer active.
            guard !task.isCancelled, let module = task.owner?.module, module.isActive, let host = module.host else { return }
            do throws(ScreenError) {
                try host.topLevel { () throws(ScreenError) in try module.handle(action: name, payload: bytes) }
            } catch {
                host.emit(.failed, "screen \(module.id)", error.message)
            }
        }
        return berth_status(BERTH_OK)
    }
}

/// See `HostServices.onMainThread`: arguments of a main-thread C call, used on that thread only.
struct MainThreadArguments<Value>: @unchecked Sendable {
    let value: Value
}

extension berth_bytes {
    /// A copy of the borrowed bytes.
    var copied: [UInt8] {
        guard let data, length > 0 else { return [] }
        return Array(UnsafeBufferPointer(start: data, count: Int(length)))
    }
}

extension BerthHost {
    /// A push or present a plugin asked for, run at top level with the id it was promised.
    func performRequestedOpen(_ route: String, argument: [UInt8], from requester: Router, id: Int, present: Bool) {
        do {
            let child = try makeScreen(route, argument: argument, id: id)
            try attachOrRelease(child) { () throws(ScreenError) in
                if present {
                    try attachActivateAndPresent(child, from: requester)
                } else {
                    try attachActivateAndPush(child, in: requester.stack)
                }
            }
        } catch {
            emit(.failed, "screen \(requester.id)", "\(present ? "present" : "push") \(route) failed: \(error.message)")
        }
    }
}
