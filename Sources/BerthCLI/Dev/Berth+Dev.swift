import ArgumentParser
import BerthRuntime
import Foundation

extension Berth {
    /// `berth dev [PACKAGE] [--plugins DIR]`: the edit loop in one command.
    struct Dev: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Build, pack and show a plugin, then do it again on every save: rebuild, pack, reload keeping state, show its screen.",
            discussion: "Talks to the host answering at --socket; when none does, runs one in this terminal (type host commands as in `berth run`). A failed build leaves the running generation as it was. Each round prints its build, pack and reload times."
        )

        @Argument(help: "The plugin package: a SwiftPM package, or a folder with a Makefile.")
        var package = "."

        @OptionGroup var folders: PluginFolderOptions
        @OptionGroup var isolation: IsolationOptions
        @OptionGroup var groups: GroupOptions

        @Option(help: ArgumentHelp("The control socket of the host to use or start (default: $XDG_RUNTIME_DIR/berth/control.sock, else /tmp/berth-UID/control.sock).", valueName: "PATH"))
        var socket: String?

        @Option(name: .customLong("state-dir"), help: ArgumentHelp("Where a host started here keeps persisted values (default: as `berth run`).", valueName: "DIR"))
        var stateDirectory: String?

        @Flag(name: .customLong("fresh-state"), help: "Reload without carrying @State (screens start over on every save).")
        var freshState = false

        @Flag(name: .customLong("tui"), help: "The host started here shows its screens full-screen (as `berth run --tui`); each save redraws them.")
        var terminalUI = false

        @OptionGroup var web: WebFrontEndOptions

        /// Set by `restart`, which re-executes this command with the same arguments.
        @Option(name: .customLong("restore"), help: .hidden)
        var restore: String?

        func validate() throws {
            if web.enabled && terminalUI { throw ValidationError("--web and --tui cannot go together: one front end at a time") }
        }

        func run() async throws {
            if web.enabled && WebFrontEndHook.run == nil {
                // The `berth` binary has no web server: berth-web, the same CLI with one, takes over.
                printError(WebFrontEndHook.executeWebExecutable())
                throw ExitStatus.failure
            }
            guard let build = PackageBuild(package: package) else {
                printError("\(package): not a plugin package (no Package.swift or Makefile)")
                throw ExitStatus.usage
            }
            let sources = build.tool == .swift ? (package as NSString).appendingPathComponent("Sources") : package
            let watcher: SourceWatcher
            do {
                watcher = try SourceWatcher(root: sources)
            } catch {
                printError(error.description)
                throw ExitStatus.failure
            }
            let pluginsFolder = folders.resolved[0]
            try? FileManager.default.createDirectory(atPath: pluginsFolder, withIntermediateDirectories: true)
            let socketPath = socket ?? ControlProtocol.defaultSocketPath()
            let running = (try? ControlClient.request(["status"], socket: socketPath)) != nil
            // A host started here with --tui shows a failed build's errors in a panel.
            let problems = terminalUI && !running ? BuildProblems() : nil
            let loop = DevLoop(package: package, pluginsFolder: pluginsFolder, socket: socketPath, keepState: !freshState, hostPrintsEvents: !running,
                               problems: problems)
            if running {
                emitLine("dev: using the host at \(socketPath); watching \(sources)")
                // That host may quit first (`quit`, a signal): dev ends with it, saying so,
                // rather than failing at the next save.
                let hostWatch = Thread {
                    try? ControlClient.follow(socket: socketPath) { _ in }
                    emitLine("dev: the host at \(socketPath) has quit; dev stops too")
                    Foundation.exit(0)
                }
                hostWatch.name = "berth.dev-host"
                hostWatch.start()
                loop.run(build: build, watcher: watcher)
            }
            emitLine("dev: watching \(sources); a host runs here (type host commands, quit to leave)")
            let thread = Thread { loop.run(build: build, watcher: watcher) }
            thread.name = "berth.dev"
            thread.start()
            var options = HostRunner.Options(
                folders: folders.resolved, script: nil, stateDirectory: stateDirectory ?? Run.defaultStateDirectory(),
                watch: false, debounce: .milliseconds(200), keepState: !freshState, socket: socketPath,
                noSocket: false, maxRetiredMB: 256, restore: restore, isolation: isolation.settings
            )
            options.groups = groups.consented
            options.terminalUI = terminalUI
            options.buildProblems = problems
            options.webPort = web.enabled ? web.port : nil
            let status = await HostRunner(options: options).run()
            if status != 0 { throw ExitCode(status) }
        }
    }
}
