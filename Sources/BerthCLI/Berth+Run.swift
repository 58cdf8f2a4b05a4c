import ArgumentParser
import BerthRuntime
import Foundation

extension Berth {
    /// `berth run`: the host, as a REPL on a terminal or running a script.
    struct Run: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Run the host: discover plugins, then read host commands (type help).",
            discussion: "With --script FILE (or - for stdin) the commands run non-interactively, each echoed with '>', and the host exits at the end; the exit status is 1 when any command failed."
        )

        @OptionGroup var folders: PluginFolderOptions

        @Option(name: .customLong("script"), help: ArgumentHelp("Run commands from FILE (- for stdin), then exit.", valueName: "FILE"))
        var script: String?

        func run() throws {
            let folders = folders.resolved
            let script = script
            let status: Int32 = MainActor.assumeIsolated {
                Self.runHost(folders: folders, script: script)
            }
            if status != 0 { throw ExitCode(status) }
        }

        @MainActor
        private static func runHost(folders: [String], script: String?) -> Int32 {
            let host: BerthHost
            do {
                host = try BerthHost(configuration: .init(pluginFolders: folders, logger: makeHostLogger()))
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
            host.discover()
            while !shell.finished {
                if interactive { FileHandleOutput.standardOutput("berth> ") }
                guard let line = lines.next() else { break }
                let trimmed = line.trimmingCharacters(in: .whitespaces)
                if !interactive, !trimmed.isEmpty, !trimmed.hasPrefix("#") { emitLine("> \(trimmed)") }
                shell.execute(line)
            }
            return shell.failures > 0 && !interactive ? ExitStatus.failure.rawValue : 0
        }
    }
}

/// Lines from a C stream (stdin or a script file).
final class LineSource {
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
