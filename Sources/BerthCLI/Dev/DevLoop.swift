@_spi(Engine) import BerthRuntime
import Foundation

/// `berth dev`'s loop: build the package, pack it into the plugins folder, and have the
/// host load it or reload it keeping state, which shows its visible screen again; when no
/// screen of the plugin is open (a first load, or a plugin the host loaded at its start),
/// its first route opens. It talks to the host over the control socket,
/// whether the host runs in this process or in another terminal. A failed build or pack
/// changes nothing in the host: the running generation stays.
///
/// Runs on a thread of its own: it blocks on the build, the watcher and the socket.
final class DevLoop: Sendable {
    let package: String
    let pluginsFolder: String
    let socket: String
    let keepState: Bool
    /// The host runs in this process and prints its own events: replies are shown without
    /// their event lines, so nothing appears twice.
    let hostPrintsEvents: Bool
    /// Told of every build's outcome, for a front end that shows the errors in place.
    let problems: BuildProblems?

    init(package: String, pluginsFolder: String, socket: String, keepState: Bool, hostPrintsEvents: Bool, problems: BuildProblems? = nil) {
        self.package = package
        self.pluginsFolder = pluginsFolder
        self.socket = socket
        self.keepState = keepState
        self.hostPrintsEvents = hostPrintsEvents
        self.problems = problems
    }

    /// How many failed builds in a row are dropped without a word because a save raced
    /// them; past it the failure is shown, so a build that always says so is not hidden.
    static let quietRetries = 3

    /// Builds and shows the plugin once, then again after every settled change under
    /// `watcher`'s folder. A build that failed because a source was saved while it ran is
    /// built again without a word: only the final result is shown. Never returns.
    func run(build: PackageBuild, watcher: SourceWatcher) -> Never {
        watcher.start()
        waitForHost()
        var savedAt: ContinuousClock.Instant?
        var retries = 0
        while true {
            let built = watcher.snapshot()
            let outcome = cycle(build: build, savedAt: savedAt) { built in
                retries < Self.quietRetries && (watcher.hasPendingChange || Self.sourceChangedDuringBuild(built.output))
            }
            switch outcome {
            case .finished:
                retries = 0
                // A change seen late, of sources as this build read them, needs no build.
                repeat {
                    savedAt = watcher.waitForChange(quiet: .milliseconds(30))
                } while watcher.snapshot() == built
                report("\(watcher.root) changed: rebuilding")
            case .superseded:
                retries += 1
                // Let the save that raced the build settle; the time shown runs from the first save.
                if watcher.hasPendingChange { _ = watcher.waitForChange(quiet: .milliseconds(30)) }
            }
        }
    }

    /// What one cycle came to.
    enum CycleOutcome {
        /// Shown: the plugin (re)loaded, or why the build, pack or load failed.
        case finished
        /// The build failed because a source changed while it ran; nothing was shown.
        case superseded
    }

    /// The compiler's own words for a source saved while it read it.
    static func sourceChangedDuringBuild(_ output: String) -> Bool {
        output.contains("was modified during the build")
    }

    /// One build → pack → (re)load. Prints the phases' times, and for a change the time from
    /// the save to the screen shown again. A failed build for which `isSuperseded` holds
    /// prints nothing.
    func cycle(build: PackageBuild, savedAt: ContinuousClock.Instant?,
               isSuperseded: (PackageBuild.Outcome) -> Bool = { _ in false }) -> CycleOutcome {
        let built = build.run()
        guard built.succeeded else {
            if isSuperseded(built) { return .superseded }
            FileHandleOutput.standardError(built.output.hasSuffix("\n") || built.output.isEmpty ? built.output : built.output + "\n")
            problems?.buildFailed(output: built.output, build: build.commandLine.joined(separator: " "), folder: package)
            report("build failed after \(Self.text(built.elapsed)) (\(build.commandLine.joined(separator: " "))); the running generation is unchanged")
            return .finished
        }
        problems?.buildSucceeded()
        let packStarted = ContinuousClock.now
        let packed: PluginPacker.Packed
        do {
            packed = try PluginPacker.pack(package, into: pluginsFolder)
        } catch let failure as PluginValidationFailure {
            for problem in failure.problems { printError(problem.description) }
            report("pack failed; the running generation is unchanged")
            return .finished
        } catch {
            printError("\(error)")
            report("pack failed; the running generation is unchanged")
            return .finished
        }
        let packTime = ContinuousClock.now - packStarted
        for warning in packed.warnings { printWarning(warning) }
        let reloadStarted = ContinuousClock.now
        guard let verb = apply(packed) else { return .finished }
        let reloadTime = ContinuousClock.now - reloadStarted
        var line = "build \(Self.text(built.elapsed)) · pack \(Self.text(packTime)) · \(verb) \(Self.text(reloadTime))"
        if let savedAt { line += " · saved → shown \(Self.text(ContinuousClock.now - savedAt))" }
        report(line)
        return .finished
    }

    /// Reloads the plugin in the host, or loads it and opens its first route when the host
    /// does not have it loaded. Returns what was done, nil after printing why it failed.
    private func apply(_ packed: PluginPacker.Packed) -> String? {
        guard let reload = request(["reload", packed.id] + (keepState ? ["--keep-state"] : [])) else { return nil }
        if reload.ok {
            show(reload)
            // Loaded at the host's start (packed before) or with every screen closed:
            // nothing of it is on show, so open its first route as a first load does.
            openFirstRouteUnlessShown(packed)
            return "reload"
        }
        guard reload.errors.contains(where: { $0.contains(": not loaded") || $0.contains(": no plugin has this id") }) else {
            show(reload)
            return nil
        }
        // Absolute: a host started elsewhere resolves paths from its own folder.
        guard let load = request(["load", URL(fileURLWithPath: packed.folder).standardizedFileURL.path]) else { return nil }
        show(load)
        guard load.ok else { return nil }
        openFirstRouteUnlessShown(packed)
        return "load"
    }

    /// Opens the plugin's first route and shows it, unless a screen of the plugin is open.
    private func openFirstRouteUnlessShown(_ packed: PluginPacker.Packed) {
        guard let screens = request(["screens"]), !Self.listsScreen(of: packed.id, in: screens.output) else { return }
        // `open` answers with the screen it opened.
        if let route = Self.firstRoute(in: packed.folder), let open = request(["open", "\(packed.id)/\(route)"]) { show(open) }
    }

    /// Whether `screens`' table (SCREEN ROUTE PLUGIN GENERATION STATE) has a row of `plugin`.
    static func listsScreen(of plugin: String, in lines: [String]) -> Bool {
        lines.flatMap { $0.split(separator: "\n") }.contains { row in
            let columns = row.split(separator: " ", omittingEmptySubsequences: true)
            return columns.count >= 3 && columns[2] == plugin
        }
    }

    /// A host started by this process binds its socket while this thread builds; wait for
    /// it to answer (a few seconds at most) before the first request.
    private func waitForHost() {
        let deadline = ContinuousClock.now + .seconds(10)
        while (try? ControlClient.request(["status"], socket: socket)) == nil, ContinuousClock.now < deadline {
            Thread.sleep(forTimeInterval: 0.05)
        }
    }

    private func request(_ args: [String]) -> ControlReply? {
        do {
            return try ControlClient.request(args, socket: socket)
        } catch {
            printError(error.description)
            return nil
        }
    }

    private func show(_ reply: ControlReply) {
        for line in reply.output where !(hostPrintsEvents && line.hasPrefix("  · ")) { emitLine(line) }
        for error in reply.errors { printError(error) }
    }

    private func report(_ line: String) {
        emitLine("dev: \(line)")
    }

    private static func firstRoute(in folder: String) -> String? {
        PluginManifest.load(path: (folder as NSString).appendingPathComponent(PluginValidator.manifestFileName)).manifest?.routes.first
    }

    static func text(_ duration: Duration) -> String {
        let seconds = SourceWatcher.seconds(duration)
        return seconds < 1 ? "\(Int((seconds * 1000).rounded())) ms" : String(format: "%.2f s", seconds)
    }
}
