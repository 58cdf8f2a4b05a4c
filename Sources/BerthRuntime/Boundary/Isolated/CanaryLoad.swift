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
        let executable = settings.resolvedWorkerExecutable
        guard FileManager.default.isExecutableFile(atPath: executable) else { return false }
        let id = plugin.manifest.id
        let trial: IsolatedPlugin
        do {
            trial = try IsolatedPlugin(plugin: plugin, generation: generation, runtimeDirectory: runtimeDirectory,
                                       workerExecutable: executable, unresponsive: settings.unresponsiveAfter,
                                       keepWorkerReady: settings.keepWorkerReady, workerPool: workerPool, logger: Self.quiet)
        } catch where error.code == .workerFailed {
            throw refusal(id, error.message)
        } catch {
            // A load error the worker reported (a handshake refused, a symbol missing) is the
            // same error an in-process load would give: pass it on as it is.
            throw error
        }
        defer { _ = try? trial.end(waitingForWorker: false) }
        if let route = plugin.manifest.routes.first {
            let screen = ScreenHandle(router: nil, host: nil, services: nil, grant: CapabilityGrant(manifest: plugin.manifest))
            // A plugin may refuse a screen it is asked for out of context; only a dead worker counts.
            if let instance = try? HostCall.run({ () throws(PluginCallError) in try trial.create(route: route, argument: [], screen: screen) }) {
                HostCall.run { trial.destroy(instance) }
            }
            if let failure = trial.failure { throw refusal(id, failure.message) }
        }
        return true
    }

    /// The trial's own log lines are not the plugin's: what it says in a worker (a refused
    /// service, say) would only repeat as errors on every load. A crash is still reported,
    /// from the worker's stderr.
    private static let quiet = Logger(label: "berth.canary") { _ in SwiftLogNoOpLogHandler() }

    private static func refusal(_ id: String, _ problem: String) -> LoaderError {
        LoaderError(.canaryFailed, plugin: id, detail: "its load-time code failed in a trial worker, so it was not loaded into the host: \(problem)")
    }
}
