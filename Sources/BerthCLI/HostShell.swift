import Foundation
@_spi(Engine) import BerthRuntime

/// The host's command language: one command per line, from a terminal, a script file or
/// the control socket. Output goes to stdout, errors to stderr; a failed command
/// never stops the host.
@MainActor
final class HostShell {
    let host: BerthHost
    /// Where output and errors go: the terminal, or a control-socket reply.
    var output: ShellOutput
    /// `quit` and `restart` act on the host loop (shared by the terminal and socket shells).
    let control: LoopControl
    /// Commands that failed so far (a script exits 1 when any did).
    private(set) var failures = 0


    init(host: BerthHost, output: ShellOutput = ShellOutput.terminal, control: LoopControl) {
        self.host = host
        self.output = output
        self.control = control
    }

    /// Runs a command given as words (from the control socket): no tokenizing.
    func execute(words: [String]) async {
        guard let command = words.first else { return }
        await run(command: command, arguments: Array(words.dropFirst()))
    }

    func emitLine(_ text: String) {
        output.line(text)
    }

    nonisolated static let help = """
        plugins                    list discovered plugins with state and generation
        discover                   scan the plugins folders again (new or fixed plugins)
        load ID|PATH|all           load a plugin by id, or a plugin folder from anywhere
        unload ID                  close its screens, then retire or unload its image
        reload ID [--keep-state] [--json]
                                   new generation from the folder (--keep-state: carry @State;
                                   --json: the new generation and each phase's time)
        call ID SYMBOL ARGS...     call an export through libffi
        open ROUTE [ARGUMENT]      push a screen on the visible stack (PLUGIN/ROUTE or ROUTE), its argument as text
        present ROUTE              present a screen modally from the visible one
        back                       the user swipes back: pop the visible screen
        dismiss                    the user swipes down: dismiss the top-most modal
        close SCREEN               close a screen programmatically (pop, or dismiss its modal)
        pop-to-root                pop the visible stack to its root
        send ACTION [TEXT]         send an action to the visible screen (#N ACTION: to screen N)
        actions [#N] [--json]      the actions the visible screen (or screen N) declares
        context TYPE [PAYLOAD]     send a route context from the visible screen (navigation unchanged)
        terminate TYPE [PAYLOAD]   send it, then pop to the nearest anchor, dismiss, or go back
        observers                  who observes which context type, where
        screen [#N] [--json]       render the visible screen, or screen N (interactive views numbered)
        tap N|ID                   tap a button (N from the last screen output, or its identity)
        toggle N|ID                flip a toggle
        type N|ID TEXT             replace a text field's text
        step N|ID +|-              move a stepper, or a picker's selection
        select N|ID INDEX          choose a picker's option (from 0)
        state                      the state storage: each slot's identity and decoded value, persisted keys
        scopes                     live scopes (kind, id, owner, instances) and the services provided
        session begin ID|end       begin or end the session scope (ending releases its instances)
        tree                       the router tree: plugin, generation, state, live tasks
        screens                    list open screens
        status                     generations, retired images and their bytes
        events                     the event log so far
        sleep MS                   wait, letting managed tasks deliver their results
        ## TEXT                    print TEXT (script narration)
        restart                    re-exec the host (keeps persisted state, reopens screens)
        quit                       leave
        """

    /// The command names, as `help` lists them (for completion and "did you mean").
    nonisolated static let commandNames: [String] = help.split(separator: "\n").compactMap { line in
        line.split(separator: " ").first.map(String.init)
    }.filter { $0 != "##" } + ["help", "exit"]

    /// Runs one line. Blank lines and `#` comments do nothing; `## text` prints the text.
    func execute(_ line: String) async {
        let trimmed = line.trimmingCharacters(in: .whitespaces)
        if trimmed.hasPrefix("##") {
            emitLine("")
            emitLine(String(trimmed.dropFirst(2)).trimmingCharacters(in: .whitespaces))
            return
        }
        guard !trimmed.isEmpty, !trimmed.hasPrefix("#") else { return }
        let words: [String]
        do {
            words = try CommandLineWords.split(trimmed)
        } catch {
            fail(error.description)
            return
        }
        guard let command = words.first else { return }
        await run(command: command, arguments: Array(words.dropFirst()))
    }

    private func run(command: String, arguments: [String]) async {
        if command == "sleep" {
            guard let milliseconds = arguments.first.flatMap(UInt64.init) else { return fail("usage: sleep MILLISECONDS") }
            // The main actor runs the host's own work meanwhile (posted task results).
            try? await Task.sleep(for: .milliseconds(milliseconds))
            return
        }
        do {
            // Every host command runs in a request scope of its own.
            try await host.inRequestScope("command \(command)") { try await run(command, arguments) }
        } catch {
            fail(failureLine(error, command: command, arguments: arguments))
        }
    }

    private func run(_ command: String, _ arguments: [String]) async throws {
        switch command {
        case "plugins": listPlugins()
        case "discover":
            let result = host.discover()
            emitLine("\(result.plugins.count) valid, \(result.rejected.count) rejected")
        case "load":
            let id = try argument(arguments, 0, "load ID|PATH|all")
            if id == "all" {
                for error in host.loadAll() { fail(error.description) }
            } else if id.contains("/") || FileManager.default.fileExists(atPath: id) {
                try await host.loadFolderOffMain(id)
            } else {
                try await host.loadOffMain(id)
            }
        case "unload": try await host.unloadOffMain(try argument(arguments, 0, "unload ID"))
        case "reload":
            let id = try argument(arguments.filter { !$0.hasPrefix("--") }, 0, "reload ID [--keep-state] [--json]")
            let generation = try await host.reloadGenerationOffMain(id, keepState: arguments.contains("--keep-state"))
            if arguments.contains("--json"), let timings = host.lastReloadTimings {
                emitLine(try JSONText.encode(ReloadReport(generation: generation, timings: timings)))
            }
            // The reloaded plugin's visible screen, as a UI would show it (not in a JSON answer).
            if !arguments.contains("--json"), let screen = await VisibleScreenText.after(reloadOf: id, in: host) { emitLine(screen) }
        case "screen":
            // On the screen's plugin's lane: a slow render holds only that plugin's screens.
            let target = arguments.first { $0.hasPrefix("#") }
            let tree = try await host.renderOnLane(screen: target == nil ? nil : try targetRouter(target).id)
            if arguments.contains("--json") {
                emitLine(tree?.root.map(ViewTreeJSON.encode) ?? "null")
            } else {
                printScreen(tree?.root)
            }
        case _ where ViewInput.commandNames.contains(command):
            let view = try viewIdentity(try argument(arguments, 0, ViewInput.usage(of: command)))
            guard let input = try ViewInput(command: command, values: Array(arguments.dropFirst())) else { return }
            try await host.input(input, view: view)
            // The input may have navigated: show whatever is visible now, under its own header.
            printScreen(host.visibleRouter?.module?.canRender == true ? try await VisibleScreenText.visibleTree(in: host) : nil)
        case "state":
            let lines = HostText.stateLines(host)
            emitLine(lines.isEmpty ? "no view state" : lines.joined(separator: "\n"))
            emitLine(HostText.persistedLines(host).joined(separator: "\n"))
        case "call":
            let id = try argument(arguments, 0, "call ID SYMBOL ARGS...")
            let symbol = try argument(arguments, 1, "call ID SYMBOL ARGS...")
            guard let generation = try host.generationForUse(of: id) else { throw ShellError("\(id) is not loaded") }
            let result = try generation.call(symbol, textArguments: Array(arguments.dropFirst(2)))
            emitLine("\(symbol) → \(result.type == .void ? "(void)" : result.description)")
        case "open":
            let route = try Route(parsing: try argument(arguments, 0, "open ROUTE [ARGUMENT]"))
            try await host.open(route, argument: Array(arguments.dropFirst().joined(separator: " ").utf8))
            // What opened, as `screen` shows it (a screen that renders no views: its header
            // only): the tree it rendered when it opened, not a second render on the main actor.
            var tree: ViewTree? = nil
            if let visible = host.visibleRouter?.module, visible.canRender {
                tree = visible.lastTree
                if tree == nil { tree = try await host.renderOnLane() }
            }
            printScreen(tree?.root)
        case "present": try await host.open(try Route(parsing: try argument(arguments, 0, "present ROUTE")), presented: true)
        case "back": try await host.userBackOnLane()
        case "dismiss": try await host.userDismissOnLane()
        case "pop-to-root": try await host.popToRootOnLane()
        case "close":
            try await host.closeScreenOnLane(try targetRouter("#" + (try argument(arguments, 0, "close SCREEN"))).id)
        case "send": try await send(arguments)
        case "actions": try listActions(arguments)
        case "context", "terminate":
            let type = try argument(arguments, 0, "\(command) TYPE [PAYLOAD]")
            guard let sender = host.visibleRouter else { throw ShellError("no screen is open to send from") }
            let payload = Array(arguments.dropFirst().joined(separator: " ").utf8)
            let delivery = command == "context"
                ? host.sendContext(type, payload: payload, from: sender)
                : host.terminate(type, payload: payload, from: sender)
            emitLine("\(type) → \(delivery.receivers.isEmpty ? "no observer" : "screen(s) " + delivery.receivers.map(String.init).joined(separator: ", "))"
                     + (command == "terminate" ? "; \(delivery.navigation.rawValue)" : ""))
        case "observers":
            let lines = HostText.contextObserverLines(host)
            emitLine(lines.isEmpty ? "no context observers" : lines.joined(separator: "\n"))
        case "scopes":
            emitLine(HostText.scopeLines(host).joined(separator: "\n"))
            for registration in host.scopes.registrations {
                emitLine("  provides \(registration.key) (\(registration.kind)) by \(registration.provider)")
            }
        case "session":
            switch arguments.first {
            case "begin": host.beginSession(try argument(arguments, 1, "session begin ID"))
            case "end":
                guard host.endSession() != nil else { throw ShellError("no session is current") }
            default: throw ShellError("usage: session begin ID | session end")
            }
        case "tree": emitLine(RouterTreeText.render(host))
        case "screens": listScreens()
        case "status": status()
        case "events": for event in host.events { emitLine("\(event.sequence). \(HostText.eventLine(event))") }
        case "help": emitLine(Self.help)
        case "quit", "exit": control.finished = true
        case "restart":
            control.restartPlan = try RestartPlan.write(for: host)
            emitLine("restarting the host (persisted state and open screens are kept)")
            control.restartRequested = true
        default:
            let hint = Suggestion.closest(to: command, among: Self.commandNames).map { "did you mean '\($0)'? " } ?? ""
            throw ShellError("unknown command '\(command)' (\(hint)try help)")
        }
    }

    private func listPlugins() {
        let table = TextTable(header: ["ID", "VERSION", "RUNTIME", "STATE", "GENERATION", "MODE", "WORKER"])
        for id in host.plugins.keys.sorted() {
            guard let record = host.plugins[id] else { continue }
            let manifest = record.source.manifest
            let mode = record.generation?.isolation ?? host.configuration.isolation.mode(for: manifest)
            table.add([id, manifest.version.description, manifest.runtime.rawValue, record.stateName,
                       record.generation.map { String($0.number) } ?? "-", mode.rawValue,
                       record.generation?.workerPID.map { "pid \($0)" } ?? "-"])
        }
        for rejected in host.rejected {
            table.add([rejected.id ?? rejected.folder, "-", "-", "invalid", "-", "-", "-"])
        }
        emitLine(table.render())
    }

    /// `send ACTION [TEXT]` to the visible screen, or `send #N ACTION [TEXT]` to screen N.
    /// A name the screen does not declare is refused, when it declares some.
    private func send(_ arguments: [String]) async throws {
        var arguments = arguments
        let screen = arguments.first?.hasPrefix("#") == true ? arguments.removeFirst() : nil
        let action = try argument(arguments, 0, "send [#SCREEN] ACTION [TEXT]")
        let router = try targetRouter(screen)
        try checkDeclared(action, by: router)
        try await host.send(screen: router.id, action: action, payload: Array(arguments.dropFirst().joined(separator: " ").utf8))
    }

    /// The screens as snapshots show them (a screen `open` has not pushed yet is `opening`).
    private func listScreens() {
        let screens = host.screens
        guard !screens.isEmpty else {
            emitLine("no open screens")
            return
        }
        let table = TextTable(header: ["SCREEN", "ROUTE", "PLUGIN", "GENERATION", "STATE"])
        for screen in screens {
            let generation = screen.generation.map(String.init)
            table.add([String(screen.id), screen.route.name, screen.plugin, generation ?? "-", generation == nil ? "-" : screen.state.rawValue])
        }
        emitLine(table.render())
    }

    private func status() {
        let loaded = host.plugins.values.compactMap(\.generation)
        emitLine("loaded: \(loaded.count) plugin(s); open screens: \(host.openRouters.count)")
        emitLine("retired Swift generations: \(host.retiredGenerations) (\(host.retiredBytes) bytes still mapped)")
        // What the host holds for each plugin, against its budget (limits.state).
        let held = loaded.sorted { $0.pluginID < $1.pluginID }.map { "\($0.pluginID) \($0.stateBudget.usage)" + ($0.stateBudget.refusedWrites > 0 ? " (\($0.stateBudget.refusedWrites) write(s) refused)" : "") }
        emitLine("state held: \(held.isEmpty ? "none" : held.joined(separator: "; "))")
        let workers = loaded.compactMap { generation in
            generation.workerPID.map { "\(generation.pluginID) pid \($0)" + (generation.workerProcessorTime.map { " cpu \(Self.seconds($0))" } ?? "")
                + (generation.workerUsage(hostMemoryCeiling: host.configuration.isolation.maxPluginMemory).map { " (\($0.text))" } ?? "") }
        }
        emitLine("workers: \(workers.isEmpty ? "none" : workers.sorted().joined(separator: ", "))")
        // What the workers' sandbox lacks here, if anything (Docs/worker-limits.md).
        if let gaps = loaded.lazy.compactMap(\.workerSandboxGaps).first { emitLine("sandbox: weaker here: \(gaps)") }
        // Contracts: who provides each, and who called it (Docs/scopes.md#across-plugins).
        for contract in host.scopes.contracts {
            let callers = contract.callers.isEmpty ? "not called yet" : "called by " + contract.callers.joined(separator: ", ")
            emitLine("service: \(contract.key) (\(contract.kind) contract) by \(contract.provider); \(callers)")
        }
        // Plugins in a call on their lane: their screens wait, the host does not.
        for call in RunningPluginCall.onLanes {
            emitLine("busy: \(call.description) has been running for \(call.elapsedMilliseconds) ms")
        }
        emitLine("runtime folder: \(host.runtimeDirectory.path)")
    }

    /// `1.25 s`: a worker's processor time as `status` shows it.
    static func seconds(_ duration: Duration) -> String {
        let milliseconds = duration.components.seconds * 1000 + duration.components.attoseconds / 1_000_000_000_000_000
        return "\(milliseconds / 1000).\(String(format: "%02d", (milliseconds % 1000) / 10)) s"
    }

    private func printScreen(_ tree: ViewNode?) {
        guard let router = host.visibleRouter else { return }
        let header = "screen \(router.id) \(router.pluginID)/\(router.route)"
        emitLine(ViewTreeText.render(tree, header: header).text)
    }

    /// A view by its number in the visible screen's last render (the numbers `screen`
    /// prints: interactive views in tree order), or by its identity path. Derived from the
    /// render, not from this shell, so every shell and socket client agrees.
    private func viewIdentity(_ text: String) throws -> String {
        guard let number = Int(text) else { return text }
        guard let router = host.visibleRouter, let module = router.module else { throw ShellError("no screen is open") }
        if module.lastTree == nil { try host.render() }
        let interactive = module.lastTree?.allNodes.filter(\.isInteractive) ?? []
        guard number >= 1, number <= interactive.count else {
            throw ShellError("screen \(router.id) has no interactive view [\(number)] (see screen)")
        }
        return interactive[number - 1].id
    }

    private func argument(_ arguments: [String], _ index: Int, _ usage: String) throws -> String {
        guard index < arguments.count else { throw ShellError("usage: \(usage)") }
        return arguments[index]
    }

    func screenID(_ text: String) throws -> Int {
        guard let id = Int(text) else { throw ShellError("'\(text)' is not a screen number (see screens)") }
        return id
    }

    private func fail(_ message: String) {
        failures += 1
        output.error(TerminalText.visible(message))
    }
}

/// Where a shell writes: lines of output and one-line errors.
struct ShellOutput {
    let line: (String) -> Void
    let error: (String) -> Void

    /// stdout and stderr (`error: ` prefixed).
    static var terminal: ShellOutput { ShellOutput(line: { BerthCLI.emitLine($0) }, error: { printError($0) }) }
}

/// Collects a command's output for a control-socket reply.
final class CapturedOutput {
    private(set) var lines: [String] = []
    private(set) var errors: [String] = []

    var sink: ShellOutput {
        ShellOutput(line: { [unowned self] in lines.append($0) }, error: { [unowned self] in errors.append($0) })
    }
}

/// A shell usage error.
struct ShellError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}

/// Splits a command line into words: whitespace separates, single or double quotes group,
/// a backslash escapes the next character.
enum CommandLineWords {
    static func split(_ line: String) throws(ShellError) -> [String] {
        var words: [String] = []
        var current = ""
        var inWord = false
        var quote: Character?
        var escaped = false
        for character in line {
            if escaped {
                current.append(character)
                escaped = false
            } else if character == "\\" {
                escaped = true
                inWord = true
            } else if let open = quote {
                if character == open { quote = nil } else { current.append(character) }
            } else if character == "\"" || character == "'" {
                quote = character
                inWord = true
            } else if character.isWhitespace {
                if inWord { words.append(current) }
                current = ""
                inWord = false
            } else {
                current.append(character)
                inWord = true
            }
        }
        guard quote == nil else { throw ShellError("unterminated quote") }
        if inWord { words.append(current) }
        return words
    }
}
