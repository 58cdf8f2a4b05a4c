@_spi(Engine) import BerthCore
internal import CBerth

/// The host-side lifecycle owner of one screen: activation of its module instance and the
/// managed tasks the host runs for it.
///
/// `activate()` and `deactivate()` are idempotent. Deactivation cancels every managed task
/// and waits until each has returned before the plugin's `deactivate` runs; a task handed
/// to an inactive interactor is cancelled at once. After deactivation the host makes no
/// interactor call into the module instance (actions, posted results, context and
/// delegate deliveries); only the screen events of its removal and `destroy` remain.
@MainActor
package final class Interactor {
    /// The module instance this interactor drives.
    package let module: ModuleInstance
    private var tasks: [String: ManagedTask] = [:]
    /// What its tasks' threads hand to the main actor (a body returned, an action posted);
    /// cancelled with the tasks.
    nonisolated let hops = MainActorHops()

    init(module: ModuleInstance) {
        self.module = module
    }

    /// Whether the screen is active (wired to the runtime, receiving input).
    package var isActive: Bool { module.isActive }
    /// Managed tasks currently running for this screen.
    package var liveTaskCount: Int { tasks.count + module.workerTasks.count }
    /// The running tasks themselves (leak checks hold them weakly).
    var runningTasks: [ManagedTask] { Array(tasks.values) }

    /// Starts runtime wiring (idempotent). When the plugin's `activate` fails, tasks it
    /// started during the call are cancelled and awaited before the error is returned.
    package func activate() throws(ScreenError) {
        do {
            try module.activate()
        } catch {
            cancelAllTasks()
            throw error
        }
    }

    /// `activate` on the plugin's lane (see `ModuleInstance.activateOnLane`); a failure
    /// cancels the tasks it started, as `activate` does.
    func activateOnLane(held: HeldRequests) async throws(ScreenError) {
        do {
            try await module.activateOnLane(held: held)
        } catch {
            cancelAllTasks()
            throw error
        }
    }

    /// Stops runtime wiring (idempotent): cancels and awaits every managed task, then calls
    /// the plugin's `deactivate`. Returns the plugin's failure message, if any (the screen
    /// is inactive either way).
    @discardableResult
    package func deactivate() -> String? {
        cancelAllTasks()
        guard module.isActive else { return nil }
        return module.deactivate()
    }

    /// Cancels every task, waits until each body returned, releases each once.
    private func cancelAllTasks() {
        tasks.cancelAll()
        hops.cancelAll()
    }

    /// Destroys the module instance (after deactivation).
    func release() throws(ScreenError) {
        deactivate()
        try module.release()
    }

    // MARK: Managed tasks

    /// Starts a task under `key`, cancelling a running task with the same key first.
    /// Refused (and released at once) when the interactor is not active.
    func startTask(key: String, descriptor: berth_task_v1) throws(ScreenError) {
        guard module.isActive else {
            ManagedTask.releaseUnstarted(descriptor)
            throw ScreenError(.lifecycle, screen: module.id, "screen \(module.id) is \(module.state); its task '\(key)' was cancelled at once")
        }
        cancelTask(key: key)
        let task = ManagedTask(key: key, screenID: module.id, descriptor: descriptor, hops: hops)
        task.owner = self
        tasks[key] = task
        task.start { finished in
            // A cancelled task left the table when it was cancelled, and whoever cancelled
            // it awaits and releases it: nothing is left for the main actor to do.
            guard !finished.isCancelled else { return }
            // Weak: a task already cancelled and released by deactivate must not be kept
            // alive by this completion job waiting for the main actor.
            finished.hops?.post { [weak finished] in
                guard let finished else { return }
                finished.owner?.taskFinished(finished)
            }
        }
    }

    /// Cancels the task `key` (a no-op when there is none) and waits for it to return.
    func cancelTask(key: String) {
        tasks.cancelTask(key: key)
    }

    /// A task's body returned on its own: it leaves the table and is released.
    package func taskFinished(_ task: ManagedTask) {
        tasks.bodyReturned(task)
    }

    /// A task's `task_post`, dropped once the screen has no handle (no longer active).
    package func taskPosted(_ task: ManagedTask, action: String, payload: [UInt8]) {
        guard let handle = module.screenHandle else { return }
        HostCallbackHandler().taskPost(handle, action: action, payload: payload)
    }
}

extension Interactor: ManagedTaskOwner {}

extension MainActorHops: MainActorPosting {}
