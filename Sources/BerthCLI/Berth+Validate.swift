import ArgumentParser
@_spi(Engine) import BerthRuntime
import Foundation

extension Berth {
    /// `berth validate PATH…`: the checks a plugin must pass before any of its code runs.
    struct Validate: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Validate plugins: the static checks (one `path: field: message` line per problem), then ten named conformance checks, each in a child process."
        )

        @Argument(help: "Plugin folders, plugin.json files, or folders of plugins (each sub-folder with a plugin.json).", completion: .file())
        var paths: [String]

        @OptionGroup var output: OutputOptions
        @OptionGroup var signatures: SignatureOptions

        @OptionGroup var isolation: IsolationOptions

        @Flag(name: .customLong("static"), help: "Only the checks that run no plugin code (manifest, containment, ELF, symbols).")
        var staticOnly = false

        func validate() throws {
            guard !paths.isEmpty else { throw ValidationError("give at least one plugin folder or manifest") }
        }

        func run() throws {
            var reports: [ValidationReport] = []
            // A host loads the first folder with an id and rejects the rest, as `list` shows.
            var firstWithID: [String: String] = [:]
            let policy = signatures.policy
            var scratchFolders: [String] = []
            defer { for folder in scratchFolders { try? FileManager.default.removeItem(atPath: folder) } }
            var manifests: [(report: Int, manifest: PluginManifest)] = []
            let pluginPaths = Self.pluginPaths(paths)
            for path in pluginPaths {
                var report: ValidationReport
                // A package folder is checked as `berth pack` would pack it.
                let checked: String
                do {
                    let staged = try PluginPacker.stagedForValidation(path)
                    checked = staged?.folder ?? path
                    if let staged { scratchFolders.append(staged.cleanup) }
                } catch let failure as PluginValidationFailure {
                    reports.append(ValidationReport(path: path, id: nil, valid: false, problems: failure.problems.map(\.description)))
                    continue
                } catch {
                    reports.append(ValidationReport(path: path, id: nil, valid: false, problems: ["\(error)"]))
                    continue
                }
                switch PluginValidator.validate(path: checked, signatures: policy) {
                case .success(let plugin) where firstWithID[plugin.manifest.id] != nil:
                    let first = firstWithID[plugin.manifest.id] ?? ""
                    report = ValidationReport(path: path, id: plugin.manifest.id, valid: false, problems: [
                        PluginProblem(path: plugin.manifestPath, field: "id", message: "'\(plugin.manifest.id)' is already provided by \(first)").description,
                    ])
                case .success(let plugin):
                    firstWithID[plugin.manifest.id] = path
                    manifests.append((reports.count, plugin.manifest))
                    report = ValidationReport(path: path, id: plugin.manifest.id, valid: true, problems: plugin.warnings.map(\.description)
                                              + CapabilityUse.warnings(for: plugin.manifest).map { "warning: \($0)" })
                    report.signature = plugin.signature == .unsigned ? "unsigned" : "signed by \(plugin.signature)"
                    report.isolation = isolation.settings.mode(for: plugin.manifest).rawValue
                    // The manifest against what the library's code reports (runs its code).
                    if !staticOnly, let data = FileManager.default.contents(atPath: plugin.manifestPath),
                       let manifest = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any],
                       let mismatches = ManifestFacts.mismatches(of: manifest, manifestPath: plugin.manifestPath, library: plugin.libraryPath),
                       !mismatches.isEmpty {
                        report.valid = false
                        report.problems += mismatches
                    }
                case .failure(let failure):
                    report = ValidationReport(path: path, id: nil, valid: false, problems: failure.problems.map(\.description))
                }
                // The conformance checks run the plugin: for plugin folders, unless --static.
                var isFolder: ObjCBool = false
                if !staticOnly, FileManager.default.fileExists(atPath: checked, isDirectory: &isFolder), isFolder.boolValue {
                    report.checks = ConformanceSuite.run(folder: checked, isolation: isolation.isolation)
                    if report.checks?.contains(where: { $0.status == .fail }) == true { report.valid = false }
                }
                reports.append(report)
            }
            // A contract one plugin consumes and none of those given provides: checked across
            // several plugins (a plugin validated alone has its providers elsewhere).
            let checksSeveral = pluginPaths.count > 1 || pluginPaths != paths
            let place = UnprovidedContract.place(of: paths.map { Self.isFolder($0) ? $0 : ParentPath.of($0) })
            for unprovided in UnprovidedContract.find(among: manifests.map(\.manifest), place: place) where checksSeveral {
                guard let index = manifests.first(where: { $0.manifest.id == unprovided.consumer })?.report else { continue }
                reports[index].problems.append("warning: \(unprovided)")
            }
            if output.json {
                emitLine(try JSONText.encode(reports))
            } else {
                for report in reports {
                    if report.valid { emitLine("\(report.path): ok (\(report.id ?? ""), \(report.signature ?? "unsigned"))") }
                    else if report.problems.isEmpty { emitLine("\(report.path): failed") }
                    for problem in report.problems { emitLine(problem) }
                    for check in report.checks ?? [] {
                        let detail = check.status == .pass ? "" : "  \(check.message)"
                        emitLine("  \(check.status.rawValue.padding(toLength: 4, withPad: " ", startingAt: 0))  \(check.check)\(detail)")
                    }
                    if report.isolation == IsolationMode.inProcess.rawValue {
                        emitLine("  note  runs in-process: a crash in this plugin ends the host and every other plugin (Docs/isolation.md)")
                    }
                }
            }
            if reports.contains(where: { !$0.valid }) { throw ExitStatus.failure }
        }
    }
}

extension Berth.Validate {
    /// The paths to validate: a folder holding no plugin.json and no Package.swift, but
    /// plugin folders, stands for those (as a host's `--plugins` folder); the rest as given.
    static func pluginPaths(_ paths: [String]) -> [String] {
        paths.flatMap { path -> [String] in
            let has = { (name: String) in FileManager.default.fileExists(atPath: (path as NSString).appendingPathComponent(name)) }
            guard isFolder(path), !has(PluginValidator.manifestFileName), !has("Package.swift") else { return [path] }
            let folders = PluginDiscovery.pluginFolders(in: path)
            return folders.isEmpty ? [path] : folders
        }
    }

    static func isFolder(_ path: String) -> Bool {
        var isFolder: ObjCBool = false
        return FileManager.default.fileExists(atPath: path, isDirectory: &isFolder) && isFolder.boolValue
    }
}

struct ValidationReport: Encodable {
    var path: String
    var id: String?
    var valid: Bool
    var problems: [String]
    /// The conformance checks, when they ran.
    var checks: [ConformanceResult]?
    /// "unsigned", or who signed it ("signed by alice", "signed by unknown key …").
    var signature: String?
    /// Where a host run with the same `--isolation` runs it (the checks run it there too).
    var isolation: String?
}
