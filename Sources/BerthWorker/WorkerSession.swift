import BerthCore
internal import Glibc
internal import CBerth

/// The worker's side of the seam: serves the host's requests (the `berth_plugin_v1` table
/// and the exports) for the plugin generations this process hosts (one, or a group's
/// members), and owns their instances. Runs on the worker's main thread, which is the thread serving the channel:
/// every call into the plugin is made from it, marked with `HostCall`, so the plugin's
/// main-thread host calls are allowed exactly where they are in-process.
@MainActor
final class WorkerSession: IsolationChannelHandler {
    /// The session of this worker process (the host table's functions reach it).
    /// Process-wide on purpose: a worker process serves exactly one session, and the C
    /// host table's functions carry no pointer to it.
    static var current: WorkerSession?

    let channel: IsolationChannel
    let shared: WorkerShared
    /// The plugin's own services: declarations and the instances the host asked for.
    let services = WorkerServices()
    /// The plugins loaded, by their hello's `member`.
    private(set) var plugins: [UInt64: WorkerPlugin] = [:]
    /// Whether the first hello confined the worker (later ones join the same sandbox).
    private var sandbox: SandboxStatus?
    /// Why confining failed, once it did: no later hello loads a plugin here (it would run
    /// in whatever part of the sandbox was set up).
    private var confinementFailure: String?
    /// The worker's CPU time when the hello arrived: `usage` counts from there, so the
    /// scan-time check measures the plugin's load, not the worker's own start-up (tens of
    /// milliseconds for a debug build, more on a loaded machine).
    private var cpuAtHello: UInt64 = 0
    var instances: [UInt64: WorkerInstance] = [:]
    private var nextInstanceToken: UInt64 = 1
    /// The slot batches of the screens being rendered, by host screen id.
    var renderBatches: [UInt64: RenderBatch] = [:]
    /// Calls the plugin made to the host (forwarded requests and `state_write`s outside a
    /// render) so far: an action that made none leaves the host as it found it, so the
    /// render after it can run here at once (`actionThenRender`).
    var hostCallsMade = 0
    /// Set by `shutdown`: the serving loop ends after the reply went out.
    private(set) var isFinished = false

    init(channel: IsolationChannel) {
        self.channel = channel
        self.shared = WorkerShared(channel: channel)
    }

    nonisolated func handle(_ request: IsolationRequest, on channel: IsolationChannel) -> IsolationReply {
        // The channel calls this on the thread serving it, the worker's main thread.
        MainActor.assumeIsolated { serve(request) }
    }

    nonisolated func receive(_ notification: IsolationNotification, on channel: IsolationChannel) {
        // A host sends no notifications in wire version 1.
    }

    func serve(_ request: IsolationRequest) -> IsolationReply {
        // At top level only: a request nested in one of the worker's own calls must not
        // re-enter the plugin with a task's release (in-process, that waits for top level too).
        if channel.callDepth == 0 { releaseReturnedTasks() }
        switch request {
        case .hello(let hello):
            cpuAtHello = PluginResourceUsage.current.cpuNanoseconds
            return load(hello)
        case .shutdown:
            isFinished = true
            return .status(.ok)
        case .usage:
            var usage = PluginResourceUsage.current
            usage.cpuNanoseconds -= min(usage.cpuNanoseconds, cpuAtHello)
            return .usage(usage)
        case .host:
            return .status(.failure(Int(BERTH_ERR_UNSUPPORTED), "\(request.name) is served by the host, not by a worker"))
        case .create, .destroy, .activate, .deactivate, .screenEvent, .action, .actionThenRender, .delegateReceived, .contextReceived,
             .render, .renderTree, .saveState, .restoreState, .unload, .callExport, .serviceCreate, .serviceRelease, .serviceInvoke:
            break
        }
        guard !plugins.isEmpty else {
            return .status(.failure(Int(BERTH_ERR_STATE), "\(request.name): no plugin is loaded in this worker (send hello first)"))
        }
        switch request {
        case .serviceCreate(let service):
            return services.make(service: service)
        case .serviceRelease(let instance):
            services.release(instance: instance)
            return .status(.ok)
        case .serviceInvoke(let instance, let request):
            return services.invoke(instance: instance, request: request)
        case .create(let member, _, _, _), .callExport(let member, _, _), .unload(let member):
            return serve(request, plugin: member)
        default:
            return serveInstance(request)
        }
    }

    /// A request about one plugin as a whole.
    private func serve(_ request: IsolationRequest, plugin member: UInt64) -> IsolationReply {
        guard let plugin = plugins[member] else {
            return .status(.failure(Int(BERTH_ERR_STATE), "\(request.name): no plugin \(member) is loaded in this worker (send hello first)"))
        }
        guard !plugin.isUnloaded else {
            return .status(.failure(Int(BERTH_ERR_STATE), "\(request.name): \(plugin.pluginID) is unloaded; nothing is called"))
        }
        switch request {
        case .create(_, let screen, let route, let argument):
            return create(screen: screen, route: route, argument: argument, plugin: plugin)
        case .callExport(_, let symbol, let arguments):
            do {
                return .exported(try plugin.image.callExport(symbol, arguments: arguments))
            } catch {
                return .exportFailed(error)
            }
        case .unload:
            let open = instances.values.filter { $0.plugin === plugin }.count
            guard open == 0 else {
                return .status(.failure(Int(BERTH_ERR_STATE), "unload: \(open) screen(s) of \(plugin.pluginID) are still open; destroy them first"))
            }
            services.releaseAll(of: member)
            plugin.image.unload()
            return .status(.ok)
        default:
            preconditionFailure("serve(_:plugin:) handles plugin requests only, not \(request.name)")
        }
    }

    /// Loads the library named by the hello (one per member; a group's worker hosts several).
    private func load(_ hello: WorkerHello) -> IsolationReply {
        if let loaded = plugins[hello.member] {
            return .helloFailed(LoaderError(.alreadyLoaded, plugin: hello.pluginID, "this worker already hosts \(loaded.pluginID) as member \(hello.member)"))
        }
        guard hello.wireVersion == IsolationWire.version else {
            return .helloFailed(LoaderError(.handshakeFailed, plugin: hello.pluginID,
                                            "the host speaks channel version \(hello.wireVersion), this worker \(IsolationWire.version)"))
        }
        if let confinementFailure {
            return .helloFailed(LoaderError(.workerFailed, plugin: hello.pluginID, "the worker could not confine itself: \(confinementFailure)"))
        }
        // Confined before the first dlopen: the plugin's constructors run inside it. A group's
        // later members join the sandbox the first hello set up (the union of their policies).
        if sandbox == nil {
            sandbox = .off
            // Unconfined, the shared network namespace's descriptors are not needed.
            if hello.sandbox == nil { WorkerSandbox.closeSharedNetwork() }
            if let policy = hello.sandbox {
                do throws(WorkerSandbox.Failure) {
                    sandbox = try WorkerSandbox.apply(policy)
                } catch {
                    confinementFailure = error.message
                    return .helloFailed(LoaderError(.workerFailed, plugin: hello.pluginID, "the worker could not confine itself: \(error.message)"))
                }
            }
        }
        do {
            let loaded = try WorkerPlugin(hello: hello)
            plugins[hello.member] = loaded
            var handshake = loaded.handshake
            handshake.sandbox = sandbox ?? .off
            return .hello(handshake)
        } catch {
            return .helloFailed(error)
        }
    }

    /// A new instance token.
    func takeInstanceToken() -> UInt64 {
        defer { nextInstanceToken += 1 }
        return nextInstanceToken
    }

    /// Releases the tasks whose body returned on its own since the last request. The main
    /// thread is blocked reading the channel while idle, so this runs at the next top-level
    /// request (berth.h asks for `release` on the main thread after `run`, not at a given
    /// moment).
    func releaseReturnedTasks() {
        for (task, entry) in shared.takeReturnedTasks() {
            if let instance = instances[entry.instance] {
                instance.taskReturned(task)
            } else {
                task.releaseOnce()
            }
        }
    }

    /// Forwards a plugin's main-thread call to the host, on the current stack.
    func forward(_ request: IsolationRequest) throws(ChannelError) -> IsolationReply {
        hostCallsMade += 1
        return try channel.call(request)
    }
}
