import Foundation
@_spi(Engine) @testable import BerthRuntime
import BerthTestSupport

/// A small host for the isolation tests: answers a worker's requests like a host would
/// (state and persisted values in dictionaries, navigation promising new screen ids),
/// records every request with the channel depth it arrived at, and every notification.
/// Tests override single answers with `answer`. `Sendable` like every channel handler: what
/// it records is `Locked`, and `answer` runs outside the lock (it may call back).
final class RecordingHost: IsolationChannelHandler {
    private struct Record {
        var requests: [(request: IsolationRequest, depth: Int)] = []
        var notifications: [IsolationNotification] = []
        var state: [UInt64: [IsolationSlotKey: IsolationStateSlot]] = [:]
        var persisted: [String: [UInt8]] = [:]
        var nextScreenID: UInt64 = 100
        var answer: (@Sendable (IsolationRequest, IsolationChannel) -> IsolationReply?)?
    }
    private let record = Locked(Record())

    var requests: [(request: IsolationRequest, depth: Int)] { record.withLock { $0.requests } }
    var notifications: [IsolationNotification] { record.withLock { $0.notifications } }
    /// The host's state storage for the screens of the test.
    var state: [UInt64: [IsolationSlotKey: IsolationStateSlot]] {
        get { record.withLock { $0.state } }
        set { record.withLock { $0.state = newValue } }
    }
    /// A test's own answer to a request; nil falls back to the defaults below.
    var answer: (@Sendable (IsolationRequest, IsolationChannel) -> IsolationReply?)? {
        get { record.withLock { $0.answer } }
        set { record.withLock { $0.answer = newValue } }
    }

    func handle(_ request: IsolationRequest, on channel: IsolationChannel) -> IsolationReply {
        let answer = record.withLock { record in
            record.requests.append((request, channel.callDepth))
            return record.answer
        }
        if let custom = answer?(request, channel) { return custom }
        return record.withLock { record in
            switch request {
            case .host(.navigate(let kind, _, _), _):
                guard kind == 1 || kind == 2 else { return .navigated(.ok, screen: 0) }
                defer { record.nextScreenID += 1 }
                return .navigated(.ok, screen: record.nextScreenID)
            case .host(.stateRead(let key, let fingerprint), let screen):
                guard let slot = record.state[screen]?[key], slot.fingerprint == fingerprint else { return .bytes(IsolationStatus(code: 2), []) }
                return .bytes(.ok, slot.bytes)
            case .host(.persistRead(let key), _):
                guard let bytes = record.persisted[key] else { return .bytes(IsolationStatus(code: 2), []) }
                return .bytes(.ok, bytes)
            case .host(.persistWrite(let key, let value), _):
                record.persisted[key] = value
                return .status(.ok)
            case .host(.contextCanTerminate, _):
                return .flag(false)
            default:
                return .status(.ok)
            }
        }
    }

    func receive(_ notification: IsolationNotification, on channel: IsolationChannel) {
        record.withLock { record in
            record.notifications.append(notification)
            if case .stateWrite(let screen, let slot) = notification { record.state[screen, default: [:]][slot.key] = slot }
        }
    }

    /// The requests of one kind, by name ("state_read").
    func requests(named name: String) -> [IsolationRequest] {
        requests.map(\.request).filter { $0.name == name }
    }

    /// The screen's state as a render batch.
    func slots(of screen: UInt64) -> [IsolationStateSlot] {
        (state[screen] ?? [:]).values.sorted { ($0.key.identity, $0.key.index) < ($1.key.identity, $1.key.index) }
    }

    var logLines: [String] {
        notifications.compactMap { if case .log(_, _, let message) = $0 { message } else { nil } }
    }
}

/// A real `berth-worker` on a real plugin library, driven by a `RecordingHost`.
final class LaunchedWorker {
    let process: WorkerProcess
    let host = RecordingHost()
    var channel: IsolationChannel { process.channel }
    /// True when the plugin renders through `render_tree` (the binary tree).
    private(set) var rendersTree = false
    /// The identity paths each screen's binary trees defined, by id.
    private var paths: [UInt64: [String]] = [:]
    /// The slots the last binary render used (its bitmap), for the render-pass GC.
    private(set) var lastUsed: [IsolationSlotKey] = []

    /// The built worker, beside the test bundle.
    static var executable: String { BuildProducts.directory + "/berth-worker" }

    init(for plugin: String) throws {
        process = try WorkerProcess.spawn(executable: Self.executable, plugin: plugin)
        process.channel.handler = host
        process.channel.replyTimeout = .seconds(30)
    }

    /// Starts a worker on an example plugin (`counter.json`) and says hello.
    static func launch(_ manifestName: String, edit: (inout WorkerHello) -> Void = { _ in }) throws -> (LaunchedWorker, IsolationReply) {
        let (manifest, problems) = PluginManifest.load(path: BuildProducts.manifest(manifestName))
        guard let manifest else { throw TestFailure("\(manifestName) does not load: \(problems)") }
        var hello = WorkerHello(manifest: manifest, libraryPath: BuildProducts.library(manifest.library))
        edit(&hello)
        let worker = try LaunchedWorker(for: manifest.id)
        let reply = try worker.channel.call(.hello(hello))
        if case .hello(let handshake) = reply { worker.rendersTree = handshake.functions.contains(.renderTree) }
        return (worker, reply)
    }

    /// A worker on the C fixture library with the routes and exports the tests use.
    static func launchFixtures() throws -> LaunchedWorker {
        let hello = WorkerHello(
            pluginID: "org.berth.fixtures", libraryPath: BuildProducts.library("libBerthFixtures.so"), entry: "fixture_entry_ok",
            runtime: .c, abi: ABIVersion(major: 1, minor: 0), routes: ["probe", "task-then-fail", "off-thread"],
            exports: ["fx_offthread_status", "fx_task_releases", "fx_task_runs_finished", "fx_deactivations"].map {
                ExportSignature(symbol: $0, params: [], returns: .int32)
            })
        let worker = try LaunchedWorker(for: hello.pluginID)
        guard case .hello = try worker.channel.call(.hello(hello)) else { throw TestFailure("the fixture library did not load") }
        return worker
    }

    func call(_ request: IsolationRequest) throws(ChannelError) -> IsolationReply {
        try channel.call(request)
    }

    /// Creates and activates a screen; returns the instance token.
    func open(_ route: String, screen: UInt64, argument: String = "") throws -> UInt64 {
        guard case .created(let status, let token) = try call(.create(screen: screen, route: route, argument: Array(argument.utf8))),
              status.isOK else { throw TestFailure("create \(route) failed") }
        guard try call(.activate(instance: token)).status.isOK else { throw TestFailure("activate \(route) failed") }
        return token
    }

    /// One render with the host's state for `screen` (through `render_tree` when the plugin
    /// has it, the slots named by path); the result and its parsed tree.
    func render(_ token: UInt64, screen: UInt64) throws -> (IsolationRenderResult, ViewNode?) {
        let sent = host.slots(of: screen)
        guard rendersTree else {
            guard case .rendered(let result) = try call(.render(instance: token, slots: sent)) else {
                throw TestFailure("render did not answer .rendered")
            }
            return (result, try LegacyJSONTree.parse(result.tree))
        }
        let slots = sent.map {
            RenderSlot(identityID: RenderSlot.unknownIdentity, identity: $0.key.identity, index: $0.key.index, fingerprint: $0.fingerprint, bytes: $0.bytes)
        }
        guard case .rendered(let result) = try call(.renderTree(instance: token, slots: slots)) else {
            throw TestFailure("render_tree did not answer .rendered")
        }
        guard result.status.isOK, !result.tree.isEmpty else { return (result, nil) }
        let header = try BinaryViewTree.header(result.tree)
        var known = header.reset ? [] : paths[screen, default: []]
        known.append(contentsOf: header.definitions)
        paths[screen] = known
        let tree = try BinaryViewTree(bytes: result.tree, header: header, paths: known)
        let alive = Array(header.alive)
        lastUsed = sent.indices.filter { $0 / 8 < alive.count && alive[$0 / 8] & (1 << UInt8($0 % 8)) != 0 }.map { sent[$0].key }
        return (result, tree.root())
    }

    /// Serves notifications while idle until `condition` holds (at most `timeout`).
    func serve(until condition: (RecordingHost) -> Bool, timeout: Duration = .seconds(10)) throws -> Bool {
        try eventually(timeout: timeout, every: .zero) {
            if condition(host) { return true }
            try channel.serveNext(timeout: .milliseconds(50))
            return condition(host)
        }
    }

    /// Asks the worker to exit and returns how it ended.
    func shutDown() throws -> WorkerTermination {
        _ = try call(.shutdown)
        return process.waitForExit()
    }
}

/// Shell scripts spawned as if they were workers (they get the same descriptors).
final class ScriptFolder {
    let path = NSTemporaryDirectory() + "berth-scripts-\(UUID().uuidString.prefix(8))"

    init() throws {
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    }

    deinit {
        try? FileManager.default.removeItem(atPath: path)
    }

    /// Writes `body` as an executable script and spawns it with `WorkerProcess.spawn`.
    func spawn(_ name: String, _ body: String, environment: [String: String] = [:]) throws -> WorkerProcess {
        let script = path + "/" + name
        // Written through a close-on-exec descriptor: a process started elsewhere in the test
        // run while it is open would otherwise keep it open for writing for its whole life,
        // and exec would fail with ETXTBSY all that time (CI's did, for more than 10 s).
        let descriptor = open(script, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o755)
        guard descriptor >= 0 else { throw TestFailure("\(script): \(String(cString: strerror(errno)))") }
        let bytes = Array(("#!/bin/sh\n" + body).utf8)
        let written = write(descriptor, bytes, bytes.count)
        close(descriptor)
        guard written == bytes.count else { throw TestFailure("\(script): short write") }
        // Between fork and exec, a child started at that moment still holds it: try again.
        var spawned: Result<WorkerProcess, WorkerSpawnError>!
        eventually(timeout: .seconds(60), every: .milliseconds(10)) {
            spawned = Result { () throws(WorkerSpawnError) in try WorkerProcess.spawn(executable: script, plugin: name, environment: environment) }
            guard case .failure(let error) = spawned else { return true }
            return error.errnoText?.contains("Text file busy") != true
        }
        return try spawned.get()
    }
}

struct TestFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

extension ViewNode {
    /// The texts and labels of every node, in tree order.
    var texts: [String] { allNodes.compactMap { $0.fields["text"] ?? $0.fields["label"] } }
}
