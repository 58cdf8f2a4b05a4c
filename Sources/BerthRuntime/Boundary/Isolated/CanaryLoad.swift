@_spi(Engine) import BerthCore
import Foundation
import Logging

/// The trial load of an in-process generation: the library runs its load-time code
/// (ELF constructors, the entry, the handshake, one create/destroy of its first route) in a
/// throwaway worker. Only when that worker survives is the library mapped into the host,
/// so a plugin that crashes while loading is a clear error instead of a dead host.
@MainActor
enum CanaryLoad {
    /// Runs the trial; throws the reason it failed. Returns false when no worker executable
    /// is there to run it (the caller warns once and loads without the trial).
    static func run(_ plugin: ValidatedPlugin, generation: Int, runtimeDirectory: RuntimeDirectory,
                    settings: IsolationSettings, workerPool: WorkerPool) throws(LoaderError) -> Bool {
        guard FileManager.default.isExecutableFile(atPath: settings.resolvedWorkerExecutable) else { return false }
        let trial: IsolatedPlugin
        do {
            trial = try IsolatedPlugin(WorkerStart(plugin: plugin, generation: generation, runtimeDirectory: runtimeDirectory, settings: settings,
                                                   workerPool: workerPool, logger: Self.quiet))
        } catch {
            throw refusalWhenWorkerFailed(plugin.manifest.id, error)
        }
        defer { _ = try? trial.end(waitingForWorker: false) }
        if let route = plugin.manifest.routes.first {
            // A plugin may refuse a screen it is asked for out of context; only a dead worker counts.
            if let instance = try? HostCall.run({ () throws(PluginCallError) in try trial.create(route: route, argument: [], screen: trialScreen(plugin)) }) {
                HostCall.run { trial.destroy(instance) }
            }
        }
        try survived(trial)
        return true
    }

    /// `run`, with the trial worker started and its `hello` and `create` on the worker's lane:
    /// the main actor goes on meanwhile.
    static func runOffMain(_ plugin: ValidatedPlugin, generation: Int, runtimeDirectory: RuntimeDirectory,
                           settings: IsolationSettings, workerPool: WorkerPool) async throws(LoaderError) -> Bool {
        guard FileManager.default.isExecutableFile(atPath: settings.resolvedWorkerExecutable) else { return false }
        let trial: IsolatedPlugin
        do {
            trial = try await IsolatedPlugin.start(WorkerStart(plugin: plugin, generation: generation, runtimeDirectory: runtimeDirectory,
                                                               settings: settings, workerPool: workerPool, logger: Self.quiet))
        } catch {
            throw refusalWhenWorkerFailed(plugin.manifest.id, error)
        }
        defer { _ = try? trial.end(waitingForWorker: false) }
        if let route = plugin.manifest.routes.first {
            let creating = RunningPluginCall.Call(plugin: plugin.manifest.id, route: route, screen: 0, function: "trial create")
            let context = LaneCallContext(screen: nil, request: nil, held: HeldRequests())
            if let instance = try? await trial.createOnLane(route: route, argument: [], screen: trialScreen(plugin), as: creating, in: context) {
                HostCall.run { trial.destroy(instance) }
            }
        }
        try survived(trial)
        return true
    }

    /// A worker that failed is the canary's refusal. A load error the worker reported (a
    /// handshake refused, a symbol missing) is the same error an in-process load would give:
    /// it is passed on as it is.
    private static func refusalWhenWorkerFailed(_ id: String, _ error: LoaderError) -> LoaderError {
        error.code == .workerFailed ? refusal(id, error.message) : error
    }

    /// The screen the trial's one `create` is for: no router, no host.
    private static func trialScreen(_ plugin: ValidatedPlugin) -> ScreenHandle {
        ScreenHandle(router: nil, host: nil, services: nil, grant: CapabilityGrant(manifest: plugin.manifest))
    }

    /// Throws when the trial's worker died.
    private static func survived(_ trial: IsolatedPlugin) throws(LoaderError) {
        if let failure = trial.failure { throw refusal(trial.pluginID, failure.message) }
    }

    /// The trial's own log lines are not the plugin's: what it says in a worker (a refused
    /// service, say) would only repeat as errors on every load. A crash is still reported,
    /// from the worker's stderr.
    private static let quiet = Logger(label: "berth.canary") { _ in SwiftLogNoOpLogHandler() }

    private static func refusal(_ id: String, _ problem: String) -> LoaderError {
        LoaderError(.canaryFailed, plugin: id, detail: "its load-time code failed in a trial worker, so it was not loaded into the host: \(problem)")
    }
}
