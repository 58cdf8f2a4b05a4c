import BerthCore
internal import CBerth

/// One module instance in a worker: the plugin's `berth_instance *`, its screen handle,
/// whether it is active, and its managed tasks, with the strictness of the in-process
/// `Interactor`: a task handed to an inactive instance is released at once and refused;
/// deactivation and destruction cancel every task and wait until each body returned.
@MainActor
final class WorkerInstance {
    /// The worker's token for this instance (what the host names it by).
    let token: UInt64
    let route: String
    /// The plugin whose instance it is (a group's worker hosts several).
    let plugin: WorkerPlugin
    let screen: WorkerScreen
    /// The plugin's instance.
    let pointer: UnsafeMutableRawPointer?
    var isActive = false
    private var tasks: [String: ManagedTask] = [:]
    private let shared: WorkerShared

    init(token: UInt64, route: String, plugin: WorkerPlugin, screen: WorkerScreen, pointer: UnsafeMutableRawPointer?, shared: WorkerShared) {
        self.token = token
        self.route = route
        self.plugin = plugin
        self.screen = screen
        self.pointer = pointer
        self.shared = shared
    }

    /// Managed tasks currently running.
    var liveTaskCount: Int { tasks.count }

    /// Starts `descriptor` under `key`, cancelling (and awaiting) a running task with the
    /// same key first. Refused, with the task released at once, unless active.
    func startTask(key: String, descriptor: berth_task_v1) -> IsolationStatus {
        guard isActive else {
            ManagedTask.releaseUnstarted(descriptor)
            return .failure(Int(BERTH_ERR_STATE), "screen \(screen.hostScreenID) is not active; its task '\(key)' was cancelled at once")
        }
        cancelTask(key: key)
        let task = ManagedTask(key: key, screenID: Int(truncatingIfNeeded: screen.hostScreenID), descriptor: descriptor)
        let serial = shared.register(task, instance: token)
        tasks[key] = task
        // Sent before the body can run, so the host sees started before any post or finish.
        shared.notify(.taskStarted(screen: screen.hostScreenID, key: key, task: serial))
        let shared = self.shared
        task.start { finished in shared.taskReturned(finished) }
        return .ok
    }

    /// Cancels the task `key` (a no-op when there is none) and waits until it returned.
    func cancelTask(key: String) {
        tasks.cancelTask(key: key)
    }

    /// Cancels every task, waits until each body returned, releases each once.
    func cancelAllTasks() {
        tasks.cancelAll()
    }

    /// A task whose body returned on its own: it leaves the table and is released.
    func taskReturned(_ task: ManagedTask) {
        tasks.bodyReturned(task)
    }
}
