@_spi(Hops) @_spi(Engine) import BerthRuntime
import BerthTerminalUI
import Foundation

/// What `quit` and `restart` ask of the host loop, from the terminal or a socket client.
@MainActor
final class LoopControl {
    var finished = false { didSet { wake?() } }
    var restartRequested = false { didSet { wake?() } }
    /// The plan the `restart` command wrote (so a plan that cannot be written refuses the
    /// restart while the host still runs).
    var restartPlan: (file: String, plan: RestartPlan)?
    /// Wakes the host loop (set by the runner), so a request from the socket is acted on
    /// even while the loop waits for a line on stdin.
    private(set) var wake: (() -> Void)?

    /// The front end's wake-up, called at once when a `quit` or `restart` already came: the
    /// control socket serves commands before the front end's service starts (a loaded
    /// machine can take seconds to start it), and a request then must not be lost.
    func setWake(_ wake: @escaping () -> Void) {
        self.wake = wake
        if finished || restartRequested { wake() }
    }
}

/// What the host loop waits for.
enum LoopInput: Sendable {
    case line(String)
    case endOfInput
    case wake
}

/// Runs `berth run`: the host, its command loop, and (with `--watch` / the control socket)
/// the watcher and the server. Everything touching the host runs on the main actor.
@MainActor
final class HostRunner {
    /// What other threads (the control server's, an event observer's follow-up) hand to
    /// the main actor; cancelled when the runner goes away.
    private nonisolated let hops = MainActorHops()

    struct Options {
        var folders: [String]
        var script: String?
        var stateDirectory: String
        var watch: Bool
        /// Defer every plugin whose manifest names no activation until its first use.
        var lazy = false
        var debounce: Duration
        var keepState: Bool
        var socket: String?
        var noSocket: Bool
        var maxRetiredMB: Int
        var restore: String?
        var isolation = IsolationSettings()
        var screenLimits = BerthHost.Configuration.ScreenLimits()
        var signatures = SignaturePolicy()
        /// Worker groups the user consents to (`--group`).
        var groups: [String: Set<String>] = [:]
        /// Run the full-screen terminal front end instead of the REPL (`--tui`).
        var terminalUI = false
        /// `berth dev`'s build outcomes, shown in the full-screen front end's problems panel.
        var buildProblems: BuildProblems?
        /// `--web`: the port the web front end serves on (nil: no web front end).
        var webPort: Int?
    }

    let options: Options
    let control = LoopControl()
    private var host: BerthHost?
    /// The subscription that prints host events (ended when the full-screen front end shows them).
    var eventPrinter: Int?
    private var server: ControlServer?
    /// One shell per socket connection, so `screen` numbers carry to the next `tap`.
    private var remoteShells: [ObjectIdentifier: HostShell] = [:]
    /// Host commands under way (terminal or socket); a reload outside any is the watcher's.
    var commandsRunning = 0
    /// Socket commands received whose reply is not written yet: the host leaves only once
    /// each is answered (or `answerGrace` has passed), so `quit` and `restart` reply too.
    private nonisolated let answering = LockedCondition(0)
    /// How long a leaving host waits for those replies (under the stuck-host watchdog's 5 s).
    private nonisolated static let answerGrace = Duration.seconds(2)

    init(options: Options) {
        self.options = options
    }

    /// Sets the host up, then runs it and its front end as a `ServiceGroup` until `quit`,
    /// `restart`, the end of a script, SIGTERM or SIGINT (HostRunner+Lifecycle.swift).
    func run() async -> Int32 {
        signal(SIGPIPE, SIG_IGN)

        let interactive = options.script == nil && isatty(STDIN_FILENO) == 1
        // A person at a terminal gets the line editor; piped output keeps the plain prompt.
        let editing = interactive && isatty(STDOUT_FILENO) == 1
        // Open the script before anything runs, so a wrong path fails cleanly.
        let lines: LineSource?
        switch options.script {
        case nil where editing:
            lines = nil
        case nil, "-":
            guard let input = fdopen(STDIN_FILENO, "r") else {
                printError("cannot read standard input")
                return ExitStatus.failure.rawValue
            }
            lines = LineSource(handle: input, owned: false)
        case let path?:
            guard let file = fopen(path, "re") else {
                printError("cannot open script \(path): \(String(cString: strerror(errno)))")
                return ExitStatus.usage.rawValue
            }
            lines = LineSource(handle: file, owned: true)
        }
        // The REPL's reader thread closes it; a host that ends before the REPL starts, here.
        let usesLines = !(options.terminalUI || options.webPort != nil)
        var linesHandedOver = false
        defer { if !linesHandedOver { lines?.close() } }
        // The socket is bound before anything loads, so a path that cannot be used stops
        // the host at once; connections wait in the backlog until the host is ready.
        guard bindServerIfWanted() else { return ExitStatus.failure.rawValue }
        defer { stopServer() }

        let host: BerthHost
        do {
            var configuration = BerthHost.Configuration(pluginFolders: options.folders, stateDirectory: options.stateDirectory,
                                                        logger: makeHostLogger(), isolation: options.isolation)
            configuration.screenLimits = options.screenLimits
            configuration.signatures = options.signatures
            configuration.groups = options.groups
            host = try BerthHost(configuration: configuration)
        } catch {
            printError("\(error)")
            return ExitStatus.failure.rawValue
        }
        self.host = host
        host.retiredLimitBytes = options.maxRetiredMB * 1024 * 1024
        eventPrinter = host.addEventObserver { event in
            emitLine(TerminalStyle.event.paint("  · \(HostText.eventLine(event))", for: STDOUT_FILENO))
            // A reload by --watch shows the screen it changed (a `reload` command does so itself).
            if event.kind == .reloaded, case .plugin(let id) = event.subject, self.commandsRunning == 0 {
                self.hops.post { () async in if let screen = await VisibleScreenText.after(reloadOf: id, in: host) { emitLine(screen) } }
            }
        }
        let shell = HostShell(host: host, control: control)
        emitLine("berth host (plugin ABI \(HostABI.version)) · plugins: \(options.folders.joined(separator: ", "))")
        if case .failed(let path, let error) = host.persistenceStatus {
            printError("persistence is OFF, nothing will be saved: \(path): \(error)")
        }
        checkPluginFolders()
        host.discover()
        if let restore = options.restore {
            restoreAfterRestart(from: restore)
        } else {
            // Dropped plugins are ready: each valid one loads now, or on first use if lazy.
            for error in host.activateDiscovered(lazy: options.lazy) { printError(error.description) }
        }
        if options.watch {
            do {
                try host.startWatching(debounce: options.debounce, keepState: options.keepState)
            } catch {
                printError(error.description)
                return ExitStatus.failure.rawValue
            }
        }
        let serving = startServer()
        let server = self.server
        let watchdog = StuckHostWatchdog(socket: { server?.stop() }, runtimeFolder: host.runtimeDirectory.path)
        if usesLines { linesHandedOver = true }
        let kind: FrontEndKind = usesLines ? (lines == nil ? .editor : .lines) : options.webPort != nil && WebFrontEndHook.run != nil ? .web : .terminalUI
        return await runServices(host: host, kind: kind, watchdog: watchdog) { [self] in
            switch kind {
            case .editor, .lines:
                return await runREPL(host: host, shell: shell, lines: lines, interactive: interactive, serving: serving)
            case .web:
                guard let port = options.webPort, let frontEnd = WebFrontEndHook.run else { return ExitStatus.failure.rawValue }
                return await runWebUI(host: host, port: port, frontEnd: frontEnd)
            case .terminalUI:
                return await runTerminalUI(host: host, shell: shell)
            }
        }
    }

    /// Names each plugin call still running on its lane as the host leaves (an in-process
    /// plugin that never returns: its thread cannot be stopped, so the host exits around it).
    /// True when there was one.
    func reportCallsLeftRunning() -> Bool {
        let running = RunningPluginCall.onLanes
        for call in running {
            printError("left \(call.description) running for \(call.elapsedMilliseconds / 1000) s: it did not return before the host quit")
        }
        return !running.isEmpty
    }

    /// A missing plugins folder is a warning (nothing to load from it); a watching host
    /// creates it, so plugins dropped there later load.
    private func checkPluginFolders() {
        for folder in options.folders where !FileManager.default.fileExists(atPath: folder) {
            if options.watch, (try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)) != nil {
                emitLine("  · created the plugins folder \(folder) (watching it)")
            } else {
                printWarning("the plugins folder \(folder) does not exist")
            }
        }
    }

    // MARK: The control socket

    /// A host listens when asked (--socket), when it watches, or when a person runs it at a
    /// terminal; a script or piped input gets no socket unless asked. False when the host
    /// must not start: the path cannot be used (it is not a socket, it is too long, it
    /// cannot be bound). Another host answering at the path only costs this one its socket.
    private func bindServerIfWanted() -> Bool {
        let interactive = options.script == nil && isatty(STDIN_FILENO) == 1
        guard !options.noSocket, options.socket != nil || options.watch || interactive else { return true }
        let path = options.socket ?? ControlProtocol.defaultSocketPath()
        do {
            server = try ControlServer(path: path)
            return true
        } catch .inUse(let message) {
            printError(message)
            return true
        } catch {
            printError(error.description)
            return false
        }
    }

    /// Stops answering and removes the socket (a second call does nothing).
    func stopServer() {
        server?.stop()
    }

    /// Starts answering the bound socket, if there is one.
    private func startServer() -> Bool {
        guard let server else { return false }
        server.start(onRefusal: { [hops] refusal in hops.post { emitLine("  · control socket: \(refusal)") } }) { [weak self] connection in self?.serve(connection) }
        emitLine("  · control socket: \(server.path)")
        return true
    }

    /// One admitted connection (its uid and token checked by `ControlServer`), on its own
    /// thread: one request at a time. Only
    /// this thread writes to the client; it waits for the client, the host never does.
    private nonisolated func serve(_ connection: ControlConnection) {
        defer { connection.finish() }
        defer { onMain { $0.remoteShells[ObjectIdentifier(connection)] = nil } }
        while true {
            let frame: [UInt8]?
            do {
                frame = try ControlProtocol.readFrame(from: connection.descriptor)
            } catch {
                connection.reply(ControlReply(ok: false, errors: [error.description]))
                return
            }
            guard let frame else { return }
            guard let request = ControlRequest(frame: frame) else {
                connection.reply(ControlReply(ok: false, errors: ["malformed request: expected a JSON object {\"args\": [\"command\", …]}"]))
                return
            }
            if request.args == ["events", "--follow"] {
                follow(connection)
                return
            }
            // Counted from here until its reply is written: a `quit` or `restart` ends the
            // host loop before this thread writes, and the loop waits for it (awaitAnswers).
            answering.withLock { $0 += 1 }
            let reply: ControlReply
            if request.args == ["status"] {
                // Status answers even while the main actor is stuck in a plugin.
                reply = onMain(timeout: .seconds(1)) { runner in await runner.execute(request.args, for: connection) } ?? Self.busyStatus()
            } else {
                reply = onMain { runner in await runner.execute(request.args, for: connection) }
            }
            if let delay = Self.testReplyDelay { Thread.sleep(forTimeInterval: delay) }
            let outcome = connection.reply(reply)
            answering.withLock { $0 -= 1 }
            answering.broadcast()
            guard outcome == .written else { return }
        }
    }

    /// Waits, at most `answerGrace`, until every socket command received has its reply
    /// written, before the host stops its server and leaves (exits or re-executes itself).
    /// The main actor stays free meanwhile: a command still to run gets to run.
    func awaitAnswers() async {
        let answering = self.answering
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            let waiter = Thread {
                let deadline = ContinuousClock.now + Self.answerGrace
                answering.wait { count, timedOut in count == 0 || timedOut ? .finish(()) : .waitUntil(deadline) }
                done.resume()
            }
            waiter.name = "berth.control-answers"
            waiter.start()
        }
    }

    /// `BERTH_TEST_CONTROL_REPLY_DELAY_MS`, for tests only (Docs/control-socket.md): each
    /// socket reply waits this long before it is written, so a test can make a host that
    /// leaves without waiting for its replies lose them every time.
    private nonisolated static let testReplyDelay: TimeInterval? = ProcessInfo.processInfo
        .environment["BERTH_TEST_CONTROL_REPLY_DELAY_MS"].flatMap(Double.init).map { $0 / 1000 }

    private func execute(_ args: [String], for connection: ControlConnection) async -> ControlReply {
        guard let host else { return ControlReply(ok: false, errors: ["the host is not running"]) }
        // A command that reaches the main actor while the host waits for replies to leave.
        if control.finished || control.restartRequested {
            return ControlReply(ok: false, errors: ["the host is leaving (quit or restart under way); \(args.joined(separator: " ")) not run"])
        }
        let captured = CapturedOutput()
        let key = ObjectIdentifier(connection)
        let shell = remoteShells[key] ?? HostShell(host: host, output: captured.sink, control: control)
        remoteShells[key] = shell
        shell.output = captured.sink
        // The events a command causes are part of its answer (what a reload did, and how long).
        // Not with --json: the answer is then one JSON document for a script.
        let token = args.contains("--json") ? nil : host.addEventObserver { event in captured.sink.line("  · \(HostText.eventLine(event))") }
        commandsRunning += 1
        await shell.execute(words: args)
        commandsRunning -= 1
        if let token { host.removeEventObserver(token) }
        return ControlReply(ok: captured.errors.isEmpty, output: captured.lines, errors: captured.errors)
    }

    /// `events --follow`: every event so far, then each new one, until the client leaves.
    /// The main actor only queues frames on the connection (never waiting for the client);
    /// a client that falls `ControlConnection.followerLimit` bytes behind is dropped.
    private nonisolated func follow(_ connection: ControlConnection) {
        let token: Int? = onMain { runner in
            guard let host = runner.host else { return nil }
            // The history is not held to the limit: a client may start following late.
            for event in host.events { connection.enqueue(ControlReply(ok: true, event: "\(event.sequence). \(HostText.eventLine(event))"), counted: false) }
            var token: Int?
            token = host.addEventObserver { [weak host] event in
                guard connection.enqueue(ControlReply(ok: true, event: "\(event.sequence). \(HostText.eventLine(event))"), counted: true) == .dropped else { return }
                if let token { host?.removeEventObserver(token) }
                emitLine("  · control socket: an events --follow client was dropped: too slow (more than \(ControlConnection.followerLimit / 1024) KiB behind)")
            }
            return token
        }
        // Writes as the client reads; returns when it leaves, or has taken the `dropped` line.
        connection.pump()
        if let token { onMain { $0.host?.removeEventObserver(token) } }
    }

    /// Runs `body` on the main actor from a connection thread and waits for its result.
    /// What `status` says when the main actor does not answer: the plugin call it is in.
    private nonisolated static func busyStatus() -> ControlReply {
        guard let call = RunningPluginCall.current else {
            return ControlReply(ok: true, output: ["busy: the host's main actor did not answer within 1 s"])
        }
        let milliseconds = call.elapsed.components.seconds * 1000 + call.elapsed.components.attoseconds / 1_000_000_000_000_000
        return ControlReply(ok: true, output: ["busy: \(call.description) has been running for \(milliseconds) ms"])
    }

    /// Like `onMain`, but gives up after `timeout` (the work still runs later).
    private nonisolated func onMain<T: Sendable>(timeout: Duration, _ body: @escaping @MainActor @Sendable (HostRunner) async -> T) -> T? {
        let result = LockedCondition<T?>(nil)
        hops.post {
            let value = await body(self)
            result.withLock { $0 = value }
            result.broadcast()
        }
        let deadline = ContinuousClock.now + timeout
        return result.wait { value, timedOut in
            if let value { return .finish(value) }
            return timedOut ? .finish(nil) : .waitUntil(deadline)
        }
    }

    private nonisolated func onMain<T: Sendable>(_ body: @escaping @MainActor @Sendable (HostRunner) async -> T) -> T {
        let result = LockedCondition<T?>(nil)
        hops.post {
            let value = await body(self)
            result.withLock { $0 = value }
            result.broadcast()
        }
        return result.wait { value, _ in value.map { .finish($0) } ?? .wait }
    }

    // MARK: Restart

    /// Re-executes the host with the same arguments and `--restore FILE`, once it has torn
    /// down: persisted state is on disk, and the plan reopens the loaded plugins and the
    /// open screens.
    func reexecute(restoring file: String) -> Never {
        var arguments = CommandLine.arguments
        if let index = arguments.firstIndex(of: "--restore"), index + 1 < arguments.count { arguments.removeSubrange(index...index + 1) }
        arguments += ["--restore", file]
        let cArguments = arguments.map { strdup($0) } + [nil]
        execv("/proc/self/exe", cArguments)
        printError("restart failed: execv: \(String(cString: strerror(errno)))")
        exit(ExitStatus.failure.rawValue)
    }

    private func restoreAfterRestart(from file: String) {
        guard let host, let data = FileManager.default.contents(atPath: file),
              let plan = try? JSONDecoder().decode(RestartPlan.self, from: data)
        else {
            printError("cannot read the restart plan \(file)")
            return
        }
        try? FileManager.default.removeItem(atPath: file)
        for id in plan.loaded where host.generation(of: id) == nil {
            do { try host.load(id) } catch { printError(error.description) }
        }
        host.replay(plan.screens)
        emitLine("  · restored after restart: \(plan.loaded.count) plugin(s), \(host.openRouters.count) screen(s)")
    }
}

/// What a restarted host reopens.
struct RestartPlan: Codable {
    var loaded: [String]
    var screens: [BerthHost.RouteReplay]

    /// Writes the plan for `host` beside its runtime folder (private to this user) and
    /// returns the file, or throws when it cannot: without it the new process could not
    /// reopen anything, so the restart is refused before the host stops.
    @MainActor
    static func write(for host: BerthHost) throws(ShellError) -> (file: String, plan: RestartPlan) {
        let plan = RestartPlan(loaded: host.plugins.values.compactMap(\.generation).map(\.pluginID).sorted(), screens: host.openRouteReplay())
        let file = ParentPath.of(host.runtimeDirectory.path) + "/restart-\(getpid()).json"
        try? FileManager.default.createDirectory(atPath: ParentPath.of(file), withIntermediateDirectories: true)
        guard FileManager.default.createFile(atPath: file, contents: Data(ControlProtocol.encode(plan))) else {
            throw ShellError("restart refused: cannot write its plan to \(file) (\(String(cString: strerror(errno)))); the host runs on")
        }
        return (file, plan)
    }
}

