import ArgumentParser
@_spi(Engine) import BerthRuntime

extension Berth {
    /// `berth call PLUGIN SYMBOL ARGS…`: call a C export through libffi.
    struct Call: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Load a plugin and call one of its exports through libffi.",
            discussion: "Arguments are converted by the manifest's signature. Put options before PLUGIN: everything after it is passed through (so negative numbers work)."
        )

        @OptionGroup var folders: PluginFolderOptions
        @OptionGroup var output: OutputOptions
        @OptionGroup var isolation: IsolationOptions
        @OptionGroup var signatures: SignatureOptions
        @OptionGroup var groups: GroupOptions

        @Argument(help: "The plugin id.", completion: ShellCompletion.pluginIDs)
        var plugin: String

        @Argument(parsing: .captureForPassthrough, help: "The export's symbol, then its arguments.")
        var symbolAndArguments: [String] = []

        func run() throws {
            guard let symbol = symbolAndArguments.first else {
                printError("give the symbol to call after the plugin id")
                throw ExitStatus.usage
            }
            let arguments = Array(symbolAndArguments.dropFirst())
            let folders = folders.resolved
            let plugin = plugin
            let json = output.json
            let settings = isolation.settings
            let policy = signatures.policy
            let groups = groups.consented
            let status: Int32 = MainActor.assumeIsolated {
                Self.call(plugin: plugin, symbol: symbol, arguments: arguments, folders: folders, json: json, isolation: settings, signatures: policy, groups: groups)
            }
            if status != 0 { throw ExitCode(status) }
        }

        @MainActor
        private static func call(plugin: String, symbol: String, arguments: [String], folders: [String], json: Bool,
                                 isolation: IsolationSettings, signatures: SignaturePolicy, groups: [String: Set<String>]) -> Int32 {
            let host: BerthHost
            do {
                host = try makeHost(folders: folders, isolation: isolation, signatures: signatures, groups: groups)
            } catch {
                printError("\(error)")
                return ExitStatus.failure.rawValue
            }
            defer { host.shutdown() }
            guard let record = host.plugins[plugin] else {
                if let rejected = host.rejected.first(where: { $0.id == plugin }) {
                    printError("\(plugin) is not valid: \(rejected.reason)")
                    return ExitStatus.failure.rawValue
                }
                let hint = Suggestion.hint(for: plugin, among: host.plugins.keys.sorted())
                printError("no plugin '\(plugin)' in \(folders.joined(separator: ", "))\(hint)")
                return ExitStatus.usage.rawValue
            }
            // Check the call against the manifest before any plugin code runs.
            guard let signature = record.source.manifest.export(named: symbol) else {
                let known = record.source.manifest.exports.map(\.symbol).joined(separator: ", ")
                printError("\(plugin) has no export '\(symbol)' (exports: \(known.isEmpty ? "none" : known))")
                return ExitStatus.usage.rawValue
            }
            let values: [FFIValue]
            do {
                values = try signature.parseArguments(arguments)
            } catch {
                printError(error.message)
                return ExitStatus.usage.rawValue
            }
            do {
                let generation = try host.load(plugin)
                let result = try generation.call(symbol, arguments: values)
                emitLine(json ? (try JSONText.encode(CallResult(result))) : result.description)
                return 0
            } catch let error as FFIError {
                printError(error.message)
                return ExitStatus.usage.rawValue
            } catch {
                printError("\(error)")
                return ExitStatus.failure.rawValue
            }
        }
    }
}

/// `{"type":"int32","value":"5"}`: the value in the same text form as human output
/// (bytes as `hex:…`).
struct CallResult: Encodable {
    var type: String
    var value: String

    init(_ value: FFIValue) {
        type = value.type.rawValue
        self.value = value.description
    }
}
