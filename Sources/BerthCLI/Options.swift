import ArgumentParser
import BerthRuntime
import Foundation
import Logging

/// `--plugins DIR` (repeatable): the folders whose sub-folders are plugins.
struct PluginFolderOptions: ParsableArguments {
    @Option(name: .customLong("plugins"), help: ArgumentHelp("A folder of plugin folders (repeatable).", valueName: "DIR"), completion: .directory)
    var folders: [String] = []

    /// The folders to scan: the ones given, else ./plugins.
    var resolved: [String] { folders.isEmpty ? ["plugins"] : folders }
}

/// `--trust DIR` and `--require-signature`: which signing keys the host trusts, and whether
/// it loads only plugins signed by one of them (Docs/signing.md).
struct SignatureOptions: ParsableArguments {
    @Option(name: .customLong("trust"), help: ArgumentHelp("The trusted-keys folder: its *.public keys, minus those in its revoked-keys file (default: $XDG_CONFIG_HOME/berth/trusted-keys, else ~/.config/berth/trusted-keys).", valueName: "DIR"))
    var trustedKeys: String?

    @Flag(name: .customLong("require-signature"), help: "Refuse plugins that are unsigned, signed by a key not trusted, or by a revoked key.")
    var requireSignature = false

    var policy: SignaturePolicy {
        SignaturePolicy(trustedKeysFolder: trustedKeys ?? SignaturePolicy.defaultTrustedKeysFolder(), requireSignature: requireSignature)
    }
}

/// `--group NAME=ID,ID` (repeatable): worker groups the user consents to. A plugin whose
/// manifest names a group shares that group's worker only when listed here, or (for a group
/// not named here) when every member is signed by one trusted key (Docs/isolation.md).
struct GroupOptions: ParsableArguments {
    @Option(name: .customLong("group"), help: ArgumentHelp("Let these plugins share worker group NAME (repeatable); unlisted plugins naming it run alone.", valueName: "NAME=ID,ID"))
    var groups: [String] = []

    func validate() throws {
        for text in groups where Self.parse(text) == nil {
            throw ValidationError("--group \(text): expected NAME=ID,ID (a group name, '=', and plugin ids separated by commas)")
        }
    }

    /// Group name to the plugin ids it may hold (a name given twice: both lists).
    var consented: [String: Set<String>] {
        groups.compactMap(Self.parse).reduce(into: [:]) { result, group in result[group.name, default: []].formUnion(group.ids) }
    }

    private static func parse(_ text: String) -> (name: String, ids: Set<String>)? {
        let parts = text.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2, !parts[0].isEmpty else { return nil }
        let ids = parts[1].split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        guard !ids.isEmpty else { return nil }
        return (String(parts[0]), Set(ids))
    }
}

/// `--json`: machine-readable output on stdout.
struct OutputOptions: ParsableArguments {
    @Flag(help: "Print JSON instead of text.")
    var json = false
}

/// Writes a line to standard error (user errors: one line, no stack trace).
func printError(_ message: String) {
    var standardError = StandardError()
    print("\(TerminalStyle.error.paint("error:", for: STDERR_FILENO)) \(TerminalText.visible(message))", to: &standardError)
}

/// Writes a warning line to standard error (the command goes on).
func printWarning(_ message: String) {
    FileHandleOutput.standardError("\(TerminalStyle.warning.paint("warning:", for: STDERR_FILENO)) \(TerminalText.visible(message))\n")
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
func makeHost(folders: [String], isolation: IsolationSettings = IsolationSettings(), signatures: SignaturePolicy = SignaturePolicy(),
              groups: [String: Set<String>] = [:]) throws -> BerthHost {
    var configuration = BerthHost.Configuration(pluginFolders: folders, logger: makeHostLogger(), isolation: isolation)
    configuration.signatures = signatures
    configuration.groups = groups
    let host = try BerthHost(configuration: configuration)
    host.discover()
    return host
}

/// Where plugins run: `--isolation`, and the crash and hang policy of isolated ones.
struct IsolationOptions: ParsableArguments {
    enum Choice: String, ExpressibleByArgument, CaseIterable {
        case manifest, process
        case inProcess = "in-process"

        /// `BERTH_ISOLATION` when it names a mode, else `manifest`: a test matrix (or a user)
        /// can change the default of every command without repeating the flag.
        static var fromEnvironment: Choice {
            ProcessInfo.processInfo.environment["BERTH_ISOLATION"].flatMap(Choice.init(rawValue:)) ?? .manifest
        }

        /// The runtime's policy for this choice (a manifest without the field: a worker).
        var policy: IsolationSettings.Policy {
            switch self {
            case .manifest: .manifest(default: .process)
            case .process: .always(.process)
            case .inProcess: .always(.inProcess)
            }
        }
    }

    @Option(help: ArgumentHelp("Where plugins run: each manifest's choice (a plugin without one gets its own worker process), or one mode for all.",
                               valueName: "manifest|process|in-process"))
    var isolation: Choice = .fromEnvironment

    @Option(name: .customLong("unresponsive-ms"), help: "An isolated plugin that has not answered a call in this long is killed and handled as a crash.")
    var unresponsiveMilliseconds = 3000

    @Option(name: .customLong("crash-limit"), help: "This many crashes of an isolated plugin within --crash-window-s mark it failed.")
    var crashLimit = 3

    @Option(name: .customLong("crash-window-s"), help: "The window of --crash-limit, in seconds.")
    var crashWindowSeconds = 300

    @Option(name: .customLong("max-plugin-memory"), help: "The most memory each isolated plugin's worker may take, in MiB (0: no limit).")
    var maxPluginMemoryMiB: UInt64 = SandboxPolicy.defaultMemoryLimit >> 20

    func validate() throws {
        guard unresponsiveMilliseconds > 0 else { throw ValidationError("--unresponsive-ms must be above 0") }
        guard crashLimit > 0 else { throw ValidationError("--crash-limit must be above 0") }
        guard crashWindowSeconds > 0 else { throw ValidationError("--crash-window-s must be above 0") }
    }

    /// The runtime's settings for these options.
    var settings: IsolationSettings {
        var settings = IsolationSettings(policy: isolation.policy, unresponsiveAfter: .milliseconds(unresponsiveMilliseconds),
                                         crashLimit: crashLimit, crashWindow: .seconds(crashWindowSeconds))
        settings.maxPluginMemory = maxPluginMemoryMiB << 20
        return settings
    }
}
