import ArgumentParser
import BerthRuntime
import Foundation

extension Berth {
    /// `berth run`: the host, as a REPL on a terminal or running a script.
    struct Run: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Run the host: discover plugins, then read host commands (type help).",
            discussion: "With --script FILE (or - for stdin) the commands run non-interactively, each echoed with '>', and the host exits at the end; the exit status is 1 when any command failed."
        )

        @OptionGroup var folders: PluginFolderOptions

        @Option(name: .customLong("script"), help: ArgumentHelp("Run commands from FILE (- for stdin), then exit.", valueName: "FILE"))
        var script: String?

        @Option(name: .customLong("state-dir"), help: ArgumentHelp("Where persisted values live (default: $XDG_STATE_HOME/berth or ~/.local/state/berth).", valueName: "DIR"))
        var stateDirectory: String?

        func run() async throws {
            let status = await Self.runHost(folders: folders.resolved, script: script, stateDirectory: stateDirectory ?? Self.defaultStateDirectory())
            if status != 0 { throw ExitCode(status) }
        }

        static func defaultStateDirectory() -> String {
            let environment = ProcessInfo.processInfo.environment
            if let state = environment["XDG_STATE_HOME"], !state.isEmpty { return state + "/berth" }
            return (environment["HOME"] ?? NSTemporaryDirectory()) + "/.local/state/berth"
        }

        /// The host loop: one command at a time on the main actor. Lines are read on another
        /// thread, so between commands the main actor is free for the host's own work
        /// (results posted by managed tasks, and later the watcher and control socket).
        @MainActor
        private static func runHost(folders: [String], script: String?, stateDirectory: String) async -> Int32 {
            let host: BerthHost
            do {
                host = try BerthHost(configuration: .init(pluginFolders: folders, stateDirectory: stateDirectory, logger: makeHostLogger()))
            } catch {
                printError("\(error)")
                return ExitStatus.failure.rawValue
            }
            defer { host.shutdown() }
            // Open the script before anything runs, so a wrong path fails cleanly.
            let interactive = script == nil && isatty(STDIN_FILENO) == 1
            let lines: LineSource
            switch script {
            case nil, "-":
                guard let input = fdopen(STDIN_FILENO, "r") else {
                    printError("cannot read standard input")
                    return ExitStatus.failure.rawValue
                }
                lines = LineSource(handle: input, owned: false)
            case let path?:
                guard let file = fopen(path, "r") else {
                    printError("cannot open script \(path): \(String(cString: strerror(errno)))")
                    return ExitStatus.usage.rawValue
                }
                lines = LineSource(handle: file, owned: true)
            }
            defer { lines.close() }
            host.onEvent = { event in emitLine("  · \(event)") }
            let shell = HostShell(host: host)
            emitLine("berth host \(HostABI.version) · plugins: \(folders.joined(separator: ", "))")
            if case .failed(let reason) = host.persistenceStatus {
                printError("persistence is OFF, nothing will be saved: \(reason)")
            }
            host.discover()
            while !shell.finished {
                if interactive { FileHandleOutput.standardOutput("berth> ") }
                guard let line = await lines.nextOffMain() else { break }
                let trimmed = line.trimmingCharacters(in: .whitespaces)
                if !interactive, !trimmed.isEmpty, !trimmed.hasPrefix("#") { emitLine("> \(trimmed)") }
                await shell.execute(line)
            }
            return shell.failures > 0 && !interactive ? ExitStatus.failure.rawValue : 0
        }
    }
}

/// Lines from a C stream (stdin or a script file).
///
/// `@unchecked Sendable`: the stream is read by one blocking call at a time (the host loop
/// awaits each line before asking for the next), never concurrently.
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

    /// Reads the next line on a background thread, leaving the main actor free meanwhile.
    func nextOffMain() async -> String? {
        await withCheckedContinuation { continuation in
            Thread { continuation.resume(returning: self.next()) }.start()
        }
    }

    func close() {
        if owned { fclose(handle) }
    }
}
