import BerthRuntime
import BerthTerminalUI
import Foundation
import Logging
import ServiceLifecycle
import Synchronization

/// `berth run`'s life as a `ServiceGroup` of swift-service-lifecycle, with two services:
///
/// 1. the host, which waits for the group's graceful shutdown and then tears the host down
///    (the one teardown: replies answered, socket removed, watcher and plugins stopped);
/// 2. the front end (the REPL, a script, the terminal front end or the web front end),
///    which returns on `quit`, `restart`, the end of a script, or graceful shutdown.
///
/// The group shuts its services down in reverse order: a signal ends the front end first,
/// then the host; a front end that returns shuts the group down (the host next). SIGTERM
/// and SIGINT shut the group down gracefully, except at the line editor, where Ctrl-C is
/// the editor's (its third press while the host is stuck raises SIGTERM: `InterruptSignal`),
/// and under `--tui`, whose front end takes both itself and returns.
extension HostRunner {
    /// Runs the front end and the host until both have ended; returns the front end's status.
    func runServices(host: BerthHost, kind: FrontEndKind, watchdog: StuckHostWatchdog, frontEnd: @escaping @MainActor @Sendable () async -> Int32) async -> Int32 {
        let status = Locked<Int32>(0)
        let hostService = MainActorService(name: "berth.host", onGracefulShutdown: nil) { [self] in
            try? await gracefulShutdown()
            await tearDown(host: host, watchdog: watchdog)
        }
        // A signal arms the watchdog before anything else: the front end may be unable to
        // act on it (a main actor stuck in a plugin call).
        let frontEndService = MainActorService(name: "berth.front-end", onGracefulShutdown: { watchdog.arm() }) {
            let result = await frontEnd()
            status.withLock { $0 = result }
        }
        var configuration = ServiceGroupConfiguration(
            services: [
                .init(service: hostService),
                .init(service: frontEndService, successTerminationBehavior: .gracefullyShutdownGroup, failureTerminationBehavior: .gracefullyShutdownGroup),
            ],
            // The group's own lines (a signal caught, a service ended) are not the host's output.
            logger: Logger(label: "berth.run") { _ in SwiftLogNoOpLogHandler() }
        )
        switch kind {
        case .terminalUI:
            // The terminal front end takes SIGTERM and SIGINT itself, in order with the keys
            // typed before them, and its return shuts the group down. A dispatch signal
            // source for them would race its handler for each signal (libdispatch reads
            // them from a signalfd), so the group takes none; the handler installed here,
            // which the front end's calls on, arms the watchdog.
            watchdog.armOnSignals([SIGTERM, SIGINT])
        case .editor:
            // Ctrl-C is the line editor's (its third press while the host is stuck raises SIGTERM).
            configuration.gracefulShutdownSignals = [.sigterm]
        case .lines, .web:
            configuration.gracefulShutdownSignals = [.sigterm, .sigint]
        }
        do {
            try await ServiceGroup(configuration: configuration).run()
        } catch {
            printError("the host's service group: \(error)")
            return ExitStatus.failure.rawValue
        }
        return reportCallsLeftRunning() ? ExitStatus.failure.rawValue : status.withLock { $0 }
    }

    /// The one teardown, whichever way the host leaves: every socket command received gets
    /// its reply, then the server, the watcher and the plugins stop; a `restart` then
    /// re-executes the host.
    private func tearDown(host: BerthHost, watchdog: StuckHostWatchdog) async {
        await awaitAnswers()
        let restart = control.restartRequested ? control.restartPlan : nil
        if let (_, plan) = restart {
            emitLine("  · restarting: \(plan.loaded.count) plugin(s), \(plan.screens.count) screen(s) to reopen")
        }
        stopServer()
        host.stopWatching()
        host.shutdown()
        watchdog.standDown()
        if let (file, _) = restart { reexecute(restoring: file) }
    }
}

/// Which front end `berth run` shows.
enum FrontEndKind {
    /// The REPL with the line editor (a person at a terminal).
    case editor
    /// Lines from a script or piped standard input.
    case lines
    /// `--tui`.
    case terminalUI
    /// `--web`, inside `berth-web`.
    case web
}

/// A service whose body runs on the main actor (where everything touching the host runs).
/// `onGracefulShutdown` runs wherever the group signals it, so it must not need the main
/// actor: it may be stuck in a plugin call.
struct MainActorService: Service, CustomStringConvertible {
    let name: String
    let onGracefulShutdown: (@Sendable () -> Void)?
    let body: @MainActor @Sendable () async -> Void

    var description: String { name }

    func run() async {
        guard let onGracefulShutdown else { return await body() }
        await withGracefulShutdownHandler { await body() } onGracefulShutdown: { onGracefulShutdown() }
    }
}

/// Ends a host whose main actor is stuck when it is told to stop (SIGTERM, SIGINT, a third
/// Ctrl-C): the normal teardown needs the main actor, so `grace` after `arm()` a thread of
/// its own restores the terminal, removes the socket and the runtime folder and exits with
/// status 1, naming the stuck call, unless `standDown()` came first. Persisted values need
/// no flush: each write was committed (WAL, synchronous FULL).
final class StuckHostWatchdog: Sendable {
    private enum State { case idle, armed, stoodDown }
    private let state = LockedCondition(State.idle)
    private let socket: @Sendable () -> Void
    private let runtimeFolder: String
    private let grace: Duration

    init(socket: @escaping @Sendable () -> Void, runtimeFolder: String, grace: Duration = .seconds(5)) {
        self.socket = socket
        self.runtimeFolder = runtimeFolder
        self.grace = grace
    }

    /// Starts the grace period (once; later calls change nothing).
    func arm() {
        let armed = state.withLock { value in
            guard value == .idle else { return false }
            value = .armed
            return true
        }
        guard armed else { return }
        let thread = Thread { [self] in
            let deadline = ContinuousClock.now + grace
            let stoodDown = state.wait { value, timedOut in
                value == .stoodDown ? .finish(true) : timedOut ? .finish(false) : .waitUntil(deadline)
            }
            if !stoodDown { exitStuck() }
        }
        thread.name = "berth.stuck-watchdog"
        thread.start()
    }

    /// Arms the watchdog when one of `signals` arrives, through a handler that writes a
    /// byte to a pipe (async-signal-safe) and a thread waiting on it: for a front end that
    /// takes those signals itself and calls on the handler it found (the terminal front end).
    func armOnSignals(_ signals: [Int32]) {
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else { return }
        for end in ends { _ = fcntl(end, F_SETFD, FD_CLOEXEC) }
        Self.signalWriteEnd.store(ends[1], ordering: .releasing)
        for signal in signals {
            var action = sigaction()
            action.__sigaction_handler.sa_handler = { _ in
                var byte: UInt8 = 1
                _ = Glibc.write(StuckHostWatchdog.signalWriteEnd.load(ordering: .acquiring), &byte, 1)
            }
            sigemptyset(&action.sa_mask)
            action.sa_flags = SA_RESTART
            sigaction(signal, &action, nil)
        }
        let reader = ends[0]
        let thread = Thread { [self] in
            var byte: UInt8 = 0
            while read(reader, &byte, 1) < 0 && errno == EINTR {}
            arm()
        }
        thread.name = "berth.signal-watch"
        thread.start()
    }

    /// The pipe `armOnSignals`' handler writes to (-1 before).
    private static let signalWriteEnd = Atomic<Int32>(-1)

    /// The host has torn down: the watchdog never fires.
    func standDown() {
        state.withLock { $0 = .stoodDown }
        state.broadcast()
    }

    private func exitStuck() -> Never {
        // A full-screen front end's terminal is put back first, so the line below is seen.
        TerminalFrontEnd.restoreTerminalNow()
        let stuck = (RunningPluginCall.current ?? RunningPluginCall.onLanes.first).map { "\($0.description), running for \(Int($0.elapsed.components.seconds)) s" } ?? "an unknown call"
        FileHandleOutput.standardError("error: the host is stuck in \(stuck); exiting without closing its plugins\n")
        socket()
        try? FileManager.default.removeItem(atPath: runtimeFolder)
        _exit(1)
    }
}
