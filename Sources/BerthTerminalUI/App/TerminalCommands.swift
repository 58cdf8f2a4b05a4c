public import BerthRuntime

/// What the `:` command line runs. The CLI hands in its REPL (every host command, with its
/// completion); an embedding application may hand in its own, or take `basic(host:)`.
public struct TerminalCommands {
    /// What a command printed, and whether it asked the front end to leave.
    public struct Outcome: Sendable {
        /// What the command printed.
        public var lines: [String]
        /// Its errors.
        public var errors: [String]
        /// Whether the front end should leave.
        public var quit: Bool

        /// An outcome with the given output.
        public init(lines: [String] = [], errors: [String] = [], quit: Bool = false) {
            self.lines = lines
            self.errors = errors
            self.quit = quit
        }
    }

    /// Runs one command line.
    public var run: @MainActor (String) async -> Outcome
    /// The candidates for the word being typed, given the words before it.
    public var complete: @MainActor (_ before: [String], _ word: String) -> [String]

    /// Commands that `run` runs and `complete` completes.
    public init(run: @escaping @MainActor (String) async -> Outcome,
                complete: @escaping @MainActor (_ before: [String], _ word: String) -> [String] = { _, _ in [] }) {
        self.run = run
        self.complete = complete
    }

    /// A few navigation commands over the public API: `open ROUTE`, `present ROUTE`,
    /// `back`, `dismiss`, `send ACTION [TEXT]`, `reload ID [--keep-state]`, `quit`.
    @MainActor
    public static func basic(host: BerthHost) -> TerminalCommands {
        let names = ["open", "present", "back", "dismiss", "send", "reload", "quit"]
        return TerminalCommands(run: { line in
            let words = line.split(separator: " ").map(String.init)
            guard let command = words.first else { return Outcome() }
            let argument = words.dropFirst().first ?? ""
            do {
                switch command {
                case "open": try await host.openScreen(try Route(parsing: argument))
                case "present": try await host.openScreen(try Route(parsing: argument), presented: true)
                case "back": try await host.userBackOnLane()
                case "dismiss": try await host.userDismissOnLane()
                case "send":
                    guard let screen = host.visibleScreen else { return Outcome(errors: ["no screen is open"]) }
                    try await host.send(screen: screen.id, action: argument, payload: Array(words.dropFirst(2).joined(separator: " ").utf8))
                case "reload": try await host.reloadOffMain(argument, keepState: words.contains("--keep-state"))
                case "quit", "exit": return Outcome(quit: true)
                default: return Outcome(errors: ["unknown command '\(command)' (\(names.joined(separator: ", ")))"])
                }
                return Outcome()
            } catch {
                return Outcome(errors: ["\(error)"])
            }
        }, complete: { before, word in
            guard let command = before.first else { return names.filter { $0.hasPrefix(word) } }
            switch command {
            case "open", "present":
                return host.pluginSnapshots().flatMap { $0.routes.map(\.description) }.filter { $0.hasPrefix(word) }.sorted()
            case "reload": return host.pluginSnapshots().map(\.id).filter { $0.hasPrefix(word) }
            case "send": return host.visibleScreen?.actions.map(\.name).filter { $0.hasPrefix(word) } ?? []
            default: return []
            }
        })
    }
}

extension TerminalCommands.Outcome {
    /// Its lines for the inspector's log: each line printed, indented, then each error.
    var logLines: [String] {
        lines.flatMap { $0.split(separator: "\n").map { "  " + $0 } } + errors.map { "  error: " + $0 }
    }

    /// What the status line says after it: the last error, else the last line printed; nil
    /// when it printed nothing (the status stays).
    var status: String? {
        if let error = errors.last { return "error: \(error)" }
        return lines.last?.split(separator: "\n").last.map(String.init)
    }
}
