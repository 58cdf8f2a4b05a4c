@_spi(Engine) import BerthRuntime
import CBerthSystem
import Foundation
import Logging

/// The named checks a plugin must pass before a user sees it (in the spirit of
/// clap-validator's named tests). `berth validate` runs each in a child process, so a plugin
/// that crashes is reported as failing that check while the validator carries on.
enum ConformanceCheck: String, CaseIterable, Codable {
    case manifestSchema = "manifest-schema"
    case libraryLoads = "library-loads"
    case symbolsPresent = "symbols-present"
    case abiHandshake = "abi-handshake"
    case createDestroyTwice = "create-destroy-twice"
    case activateDeactivateIdempotent = "activate-deactivate-idempotent"
    case routesOpenClose = "routes-open-close"
    case saveRestoreRoundTrip = "save-restore-roundtrip"
    case freshGlobals = "fresh-globals"
    case scanTime = "scan-time"

    /// One line on what the check proves.
    var summary: String {
        switch self {
        case .manifestSchema: "plugin.json follows manifest v1"
        case .libraryLoads: "the library is a whole ELF shared object that dlopen(RTLD_NOW | RTLD_LOCAL) accepts"
        case .symbolsPresent: "the entry and every declared export are exported"
        case .abiHandshake: "the entry returns a berth_plugin_v1 table this host accepts"
        case .createDestroyTwice: "each route's instance can be created and destroyed, twice, without leaking"
        case .activateDeactivateIdempotent: "activate and deactivate can be repeated"
        case .routesOpenClose: "each route opens and closes with the full screen-event sequence"
        case .saveRestoreRoundTrip: "save_state's bytes restore into a fresh instance and save the same again"
        case .freshGlobals: "a second load is a separate image with its own table"
        case .scanTime: "validating and loading takes under 100 ms of CPU time"
        }
    }
}

/// A check's outcome.
struct ConformanceResult: Codable {
    enum Status: String, Codable { case pass, fail, skip }
    var check: String
    var status: Status
    var message: String
    var milliseconds: Double
}

/// Runs one check in this process (the child `berth validate` starts).
@MainActor
enum ConformanceRunner {
    static func run(_ check: ConformanceCheck, folder: String, policy: IsolationSettings.Policy) -> ConformanceResult {
        let started = ContinuousClock.now
        var result: (ConformanceResult.Status, String)
        do {
            result = try perform(check, folder: folder, policy: policy)
        } catch {
            result = (.fail, "\(error)")
        }
        let elapsed = ContinuousClock.now - started
        let (seconds, attoseconds) = elapsed.components
        return ConformanceResult(check: check.rawValue, status: result.0, message: result.1,
                                 milliseconds: Double(seconds) * 1000 + Double(attoseconds) / 1e15)
    }

    private static func perform(_ check: ConformanceCheck, folder: String, policy: IsolationSettings.Policy) throws -> (ConformanceResult.Status, String) {
        let hostWith = { (folder: String) throws -> (BerthHost, ValidatedPlugin) in try Self.hostWith(folder, policy: policy) }
        switch check {
        case .manifestSchema:
            let path = (folder as NSString).appendingPathComponent(PluginValidator.manifestFileName)
            let (manifest, problems) = PluginManifest.load(path: path)
            let errors = problems.filter { $0.severity == .error }
            guard manifest != nil, errors.isEmpty else { return (.fail, errors.map(\.description).joined(separator: "; ")) }
            return (.pass, problems.isEmpty ? "valid" : "valid, \(problems.count) warning(s)")
        case .libraryLoads:
            let (library, runtime) = try libraryToOpen(folder)
            let copy = NSTemporaryDirectory() + "berth-check-\(UUID().uuidString.prefix(8))-" + (library as NSString).lastPathComponent
            try FileManager.default.copyItem(atPath: library, toPath: copy)
            defer { try? FileManager.default.removeItem(atPath: copy) }
            _ = dlerror()
            guard let handle = dlopen(copy, RTLD_NOW | RTLD_LOCAL | (runtime == .swift ? RTLD_NODELETE : 0)) else {
                return (.fail, "dlopen(RTLD_NOW | RTLD_LOCAL) failed: \(String(cString: dlerror()))")
            }
            if runtime == .c { dlclose(handle) }
            return (.pass, "loads")
        case .symbolsPresent:
            let plugin = try validated(folder)
            return (.pass, "\(plugin.manifest.entry) and \(plugin.manifest.exports.count) export(s) present")
        case .abiHandshake:
            let (host, plugin) = try hostWith(folder)
            let generation = try host.load(plugin.manifest.id)
            return (.pass, "ABI \(generation.handshake.abi), table of \(generation.handshake.tableSize) bytes")
        case .createDestroyTwice:
            let (host, plugin) = try hostWith(folder)
            let generation = try host.load(plugin.manifest.id)
            guard !plugin.manifest.routes.isEmpty else { return (.skip, "the plugin has no routes") }
            for route in plugin.manifest.routes {
                for _ in 0..<2 { try openAndRelease(route, plugin: plugin.manifest.id, host: host) }
            }
            // Warm up, then watch the heap over many more cycles.
            let route = plugin.manifest.routes[0]
            for _ in 0..<20 { try openAndRelease(route, plugin: plugin.manifest.id, host: host) }
            // The heap of the process the plugin runs in: this one, or its worker.
            let before = try generation.resourceUsage().heapBytes
            let cycles = 200
            for _ in 0..<cycles { try openAndRelease(route, plugin: plugin.manifest.id, host: host) }
            let growth = Int(try generation.resourceUsage().heapBytes) - Int(before)
            let place = generation.workerPID.map { "in its worker (pid \($0))" } ?? "in process"
            guard growth < cycles * 2048 else {
                return (.fail, "the heap \(place) grew by \(growth / cycles) bytes per create/destroy of '\(route)' (over \(cycles) cycles): destroy leaks")
            }
            return (.pass, "\(plugin.manifest.routes.count) route(s); heap growth \(max(0, growth) / cycles) bytes per cycle \(place)")
        case .activateDeactivateIdempotent:
            let (host, plugin) = try hostWith(folder)
            let generation = try host.load(plugin.manifest.id)
            guard let route = plugin.manifest.routes.first else { return (.skip, "the plugin has no routes") }
            _ = generation
            let screen = try host.push(Route(plugin: plugin.manifest.id, name: route))
            defer { host.close(screen) }
            let interactor = try require(screen.interactor, "no interactor for '\(route)'")
            for round in 1...3 {
                if let failure = interactor.deactivate() { return (.fail, "deactivation \(round) of '\(route)': \(failure)") }
                _ = interactor.deactivate() // repeated: the host must not call the plugin again
                do { try interactor.activate() } catch { return (.fail, "activation \(round + 1) of '\(route)' failed: \(error.message)") }
                try interactor.activate()
            }
            return (.pass, "three activate/deactivate rounds of '\(route)'")
        case .routesOpenClose:
            let (host, plugin) = try hostWith(folder)
            try host.load(plugin.manifest.id)
            guard !plugin.manifest.routes.isEmpty else { return (.skip, "the plugin has no routes") }
            for route in plugin.manifest.routes {
                let screen = try host.push(Route(plugin: plugin.manifest.id, name: route))
                let module = try require(screen.module, "no module instance for '\(route)'")
                host.close(screen)
                let expected: [ScreenLifecycleEvent] = [
                    .didLoad, .willAppear(isPresentedInitially: true), .didAppear(isPresentedInitially: true),
                    .willDisappear(isRemovedPermanently: true), .didDisappear(isRemovedPermanently: true),
                ]
                guard module.deliveredEvents == expected, module.isReleased else {
                    return (.fail, "'\(route)': events \(module.deliveredEvents), state \(module.state)")
                }
            }
            return (.pass, "\(plugin.manifest.routes.count) route(s) opened and closed")
        case .saveRestoreRoundTrip:
            let (host, plugin) = try hostWith(folder)
            let generation = try host.load(plugin.manifest.id)
            guard let route = plugin.manifest.routes.first else { return (.skip, "the plugin has no routes") }
            guard generation.savesState else {
                return (.skip, "the plugin does not implement save_state/restore_state")
            }
            let first = try host.createDetached(Route(plugin: plugin.manifest.id, name: route))
            let saved = try require(first.module, "no instance").saveState()
            host.destroyDetached(first)
            let second = try host.createDetached(Route(plugin: plugin.manifest.id, name: route))
            defer { host.destroyDetached(second) }
            let secondModule = try require(second.module, "no instance")
            try secondModule.restoreState(saved)
            let again = try secondModule.saveState()
            guard again == saved else { return (.fail, "restored '\(route)' saves \(again.count) different byte(s) from the \(saved.count) it was given") }
            return (.pass, "\(saved.count) byte(s) round-trip")
        case .freshGlobals:
            let (host, plugin) = try hostWith(folder)
            let first = try host.load(plugin.manifest.id)
            let firstTable = first.tableAddress
            let second = try host.reload(plugin.manifest.id)
            // A group's worker hosts the new generation beside the others: a new image there.
            if let firstWorker = first.workerPID, let secondWorker = second.workerPID, secondWorker != firstWorker {
                return (.pass, "generation 2 runs in a worker of its own (pid \(firstWorker) → \(secondWorker))")
            }
            guard second.tableAddress != firstTable else {
                return (.fail, "the second load returned the same table (\(String(describing: firstTable))): its state is not per image")
            }
            return (.pass, "generation 2 is a separate image with its own table")
        case .scanTime:
            // CPU time of this process, not wall time: other work on the machine must not
            // make a plugin fail (wall time is reported alongside).
            // An isolated plugin's load runs in its worker: its CPU time from the hello on
            // counts too (the worker's own start-up is not the plugin's).
            let started = ContinuousClock.now
            let cpuBefore = cpuMilliseconds()
            let (host, plugin) = try hostWith(folder)
            let generation = try host.load(plugin.manifest.id)
            var cpu = cpuMilliseconds() - cpuBefore
            if generation.workerPID != nil { cpu += Double(try generation.resourceUsage().cpuNanoseconds) / 1_000_000 }
            let wall = ContinuousClock.now - started
            let shown = (cpu * 10).rounded() / 10
            guard cpu < 100 else { return (.fail, "validating and loading took \(shown) ms of CPU time, over 100 ms (wall \(wall))") }
            return (.pass, "\(shown) ms of CPU time (wall \(wall))")
        }
    }

    private static func validated(_ folder: String) throws -> ValidatedPlugin {
        do {
            return try PluginValidator.validate(path: folder).get()
        } catch {
            throw ConformanceError(error.problems.filter { $0.severity == .error }.map(\.description).joined(separator: "; "))
        }
    }

    /// The library to open for library-loads: found whatever its symbol problems (those are
    /// symbols-present's to report); any other static problem stops here.
    private static func libraryToOpen(_ folder: String) throws -> (path: String, runtime: PluginRuntimeKind) {
        switch PluginValidator.validate(path: folder) {
        case .success(let plugin): return (plugin.libraryPath, plugin.manifest.runtime)
        case .failure(let failure):
            let blocking = failure.problems.filter { $0.severity == .error && $0.field != "entry" && !$0.field.hasPrefix("exports[") }
            let manifestPath = (folder as NSString).appendingPathComponent(PluginValidator.manifestFileName)
            guard blocking.isEmpty, let manifest = PluginManifest.load(path: manifestPath).manifest else {
                throw ConformanceError(blocking.map(\.description).joined(separator: "; "))
            }
            return (PluginValidator.realPath((folder as NSString).appendingPathComponent(manifest.library)), manifest.runtime)
        }
    }

    /// A host holding `folder`'s plugin and, for its dependencies, the plugins beside it.
    private static func hostWith(_ folder: String, policy: IsolationSettings.Policy) throws -> (BerthHost, ValidatedPlugin) {
        let plugin = try validated(folder)
        let parent = ParentPath.of(folder)
        // Each check already runs in a child process of its own: no trial worker before it.
        let host = try BerthHost(configuration: .init(pluginFolders: [parent.isEmpty ? "." : parent],
                                                      logger: Logger(label: "berth.validate") { _ in SwiftLogNoOpLogHandler() },
                                                      isolation: IsolationSettings(policy: policy, canary: false)))
        host.discover()
        host.adopt(plugin)
        return (host, plugin)
    }

    /// Creates an instance of `route` with its screen handle and destroys it again (no
    /// activation: that is another check's business).
    private static func openAndRelease(_ route: String, plugin: String, host: BerthHost) throws {
        let screen = try host.createDetached(Route(plugin: plugin, name: route))
        host.destroyDetached(screen)
        host.clearEvents()
    }

    private static func cpuMilliseconds() -> Double {
        var now = timespec()
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now)
        return Double(now.tv_sec) * 1000 + Double(now.tv_nsec) / 1_000_000
    }

    private static func require<T>(_ value: T?, _ message: String) throws -> T {
        guard let value else { throw ConformanceError(message) }
        return value
    }
}

struct ConformanceError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

