import ArgumentParser
import BerthRuntime
import Logging

/// `--plugins DIR` (repeatable): the folders whose sub-folders are plugins.
struct PluginFolderOptions: ParsableArguments {
    @Option(name: .customLong("plugins"), help: ArgumentHelp("A folder of plugin folders (repeatable).", valueName: "DIR"))
    var folders: [String] = []

    /// The folders to scan: the ones given, else ./plugins.
    var resolved: [String] { folders.isEmpty ? ["plugins"] : folders }
}

/// `--json`: machine-readable output on stdout.
struct OutputOptions: ParsableArguments {
    @Flag(help: "Print JSON instead of text.")
    var json = false
}

/// Writes a line to standard error (user errors: one line, no stack trace).
func printError(_ message: String) {
    var standardError = StandardError()
    print("error: \(message)", to: &standardError)
}

struct StandardError: TextOutputStream {
    mutating func write(_ string: String) {
        FileHandleOutput.standardError(string)
    }
}

/// A logger for plugin log lines: stderr, `[plugin#generation] level: message`.
func makeHostLogger() -> Logger {
    Logger(label: "berth") { _ in PluginLogHandler() }
}

/// Compact, timestamp-free log lines, so a demo or a script's output reads cleanly.
struct PluginLogHandler: LogHandler {
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .info

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        let merged = metadata.merging(event.metadata ?? [:]) { _, new in new }
        let source = merged["plugin"].map { "[\($0)] " } ?? ""
        FileHandleOutput.standardError("\(source)\(event.level): \(event.message)\n")
    }
}

/// Makes a host over `folders` and discovers its plugins.
@MainActor
func makeHost(folders: [String]) throws -> BerthHost {
    let host = try BerthHost(configuration: .init(pluginFolders: folders, logger: makeHostLogger()))
    host.discover()
    return host
}
