import ArgumentParser
import BerthRuntime
import Foundation

extension Berth {
    /// `berth run`: the host, as a REPL on a terminal or running a script.
    struct Run: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Run the host: discover plugins, then read host commands (type help).",
            discussion: "Every valid plugin in the plugins folders loads at start (--lazy, or \"activation\": \"lazy\" in a manifest, defers it to its first use). With --script FILE (or - for stdin) the commands run non-interactively, each echoed with '>', and the host exits at the end; the exit status is 1 when any command failed."
        )

        @OptionGroup var folders: PluginFolderOptions
        @OptionGroup var isolation: IsolationOptions
        @OptionGroup var signatures: SignatureOptions
        @OptionGroup var groups: GroupOptions

        @Option(name: .customLong("script"), help: ArgumentHelp("Run commands from FILE (- for stdin), then exit.", valueName: "FILE"))
        var script: String?

        @Option(name: .customLong("state-dir"), help: ArgumentHelp("Where persisted values live (default: $XDG_STATE_HOME/berth or ~/.local/state/berth).", valueName: "DIR"))
        var stateDirectory: String?

        @Flag(help: "Watch the plugins folders: load new plugins, reload changed ones, unload removed ones.")
        var watch = false

        @Flag(help: "Load each plugin on its first use (a route opened, an export called) instead of at start; a manifest's \"activation\" wins.")
        var lazy = false

        @Option(name: .customLong("debounce-ms"), help: "How long a changed plugin folder must be quiet before it is checked (--watch).")
        var debounceMilliseconds = 200

        @Flag(name: .customLong("keep-state"), help: "Reloads made by --watch keep @State (stateful hot reload).")
        var keepState = false

        @Option(help: ArgumentHelp("The control socket's path (default: $XDG_RUNTIME_DIR/berth/control.sock, else /tmp/berth-UID/control.sock).", valueName: "PATH"))
        var socket: String?

        @Flag(name: .customLong("no-socket"), help: "Do not listen on a control socket (a --script host listens only when --socket is given).")
        var noSocket = false

        @Option(name: .customLong("max-retired-mb"), help: "Warn and suggest `restart` when retired Swift images hold more than this.")
        var maxRetiredMB = 256

        @Option(name: .customLong("max-screens"), help: "How many screens may be open at once; opening one more is an error.")
        var maxScreens = 1_000

        @Option(name: .customLong("max-stack-depth"), help: "How many screens one navigation stack may hold; pushing one more is an error.")
        var maxStackDepth = 64

        @Option(name: .customLong("restore"), help: .hidden)
        var restore: String?

        @Flag(name: .customLong("tui"), help: "Show the plugins' screens full-screen, as controls (keys and mouse; : runs host commands, F2 the inspector).")
        var terminalUI = false

        @OptionGroup var web: WebFrontEndOptions

        func validate() throws {
            if terminalUI && script != nil { throw ValidationError("--tui and --script cannot go together: a script has no one at the terminal") }
            if web.enabled && (terminalUI || script != nil) { throw ValidationError("--web goes with neither --tui nor --script: the browser is the front end") }
        }

        func run() async throws {
            // A running host keeps a worker started ahead of its next load or reload.
            var isolation = isolation.settings
            isolation.keepWorkerReady = true
            var options = HostRunner.Options(
                folders: folders.resolved, script: script, stateDirectory: stateDirectory ?? Self.defaultStateDirectory(),
                watch: watch, lazy: lazy, debounce: .milliseconds(debounceMilliseconds), keepState: keepState, socket: socket,
                noSocket: noSocket, maxRetiredMB: maxRetiredMB, restore: restore, isolation: isolation,
                screenLimits: .init(openScreens: maxScreens, stackDepth: maxStackDepth), signatures: signatures.policy
            )
            options.terminalUI = terminalUI
            options.groups = groups.consented
            if web.enabled {
                // The `berth` binary has no web server: berth-web, the same CLI with one, takes over.
                guard WebFrontEndHook.run != nil else {
                    printError(WebFrontEndHook.executeWebExecutable())
                    throw ExitStatus.failure
                }
                options.webPort = web.port
            }
            let status = await HostRunner(options: options).run()
            if status != 0 { throw ExitCode(status) }
        }

        static func defaultStateDirectory() -> String {
            let environment = ProcessInfo.processInfo.environment
            if let state = environment["XDG_STATE_HOME"], !state.isEmpty { return state + "/berth" }
            return (environment["HOME"] ?? NSTemporaryDirectory()) + "/.local/state/berth"
        }

    }
}

/// Lines from a C stream (stdin or a script file).
///
/// `@unchecked Sendable`: handed from the host runner to its reader thread, which alone
/// reads and closes it (the runner closes it only when no reader started).
final class LineSource: @unchecked Sendable {
    private let handle: UnsafeMutablePointer<FILE>
    private let owned: Bool

    init(handle: UnsafeMutablePointer<FILE>, owned: Bool) {
        self.handle = handle
        self.owned = owned
    }

    func next() -> String? {
        var buffer: UnsafeMutablePointer<CChar>?
        var capacity = 0
        defer { free(buffer) }
        guard getline(&buffer, &capacity, handle) >= 0, let buffer else { return nil }
        var line = String(cString: buffer)
        if line.hasSuffix("\n") { line.removeLast() }
        return line
    }

    func close() {
        if owned { fclose(handle) }
    }
}
