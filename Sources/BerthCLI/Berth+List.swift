import ArgumentParser
@_spi(Engine) import BerthRuntime
import Foundation

extension Berth {
    /// `berth list`: every plugin in the folders, valid or not. Runs no plugin code.
    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List the plugins in the plugins folders, with their problems.")

        @OptionGroup var folders: PluginFolderOptions
        @OptionGroup var output: OutputOptions
        @OptionGroup var signatures: SignatureOptions

        func validate() throws {
            // A folder that is not there is a mistake to report, not an empty list.
            for folder in folders.resolved {
                var isFolder: ObjCBool = false
                guard FileManager.default.fileExists(atPath: folder, isDirectory: &isFolder), isFolder.boolValue else {
                    throw ValidationError("--plugins \(folder): no such folder")
                }
            }
        }

        func run() throws {
            let result = PluginDiscovery.scan(folders.resolved, signatures: signatures.policy)
            let rows = result.plugins.map(PluginListing.init(valid:)) + result.rejected.map(PluginListing.init(rejected:))
            if output.json {
                emitLine(try JSONText.encode(rows))
                return
            }
            guard !rows.isEmpty else {
                emitLine("no plugins in \(folders.resolved.joined(separator: ", "))")
                return
            }
            let table = TextTable(header: ["ID", "VERSION", "RUNTIME", "STATE", "ROUTES", "EXPORTS", "SIGNER"])
            for row in rows {
                table.add([row.id ?? "?", row.version ?? "-", row.runtime ?? "-", row.state.rawValue,
                           row.routes.joined(separator: ","), String(row.exports), row.signer ?? "-"])
            }
            emitLine(table.render())
            for problem in result.trustProblems { emitLine(problem.description) }
            for row in rows {
                for problem in row.problems { emitLine(problem) }
            }
            for line in Self.duplicateRouteWarnings(result.plugins) { emitLine(line) }
        }

        /// One line per route that two or more valid plugins provide: a bare `open ROUTE`
        /// of it is ambiguous.
        static func duplicateRouteWarnings(_ plugins: [ValidatedPlugin]) -> [String] {
            let owners = Dictionary(grouping: plugins.flatMap { plugin in plugin.manifest.routes.map { ($0, plugin.manifest.id) } }, by: \.0)
            return owners.keys.sorted().compactMap { route in
                let ids = owners[route, default: []].map(\.1).sorted()
                guard ids.count > 1 else { return nil }
                return "warning: route '\(route)' is provided by \(ids.joined(separator: " and ")); open it as PLUGIN/ROUTE"
            }
        }
    }
}

/// One row of `berth list` (also its JSON form).
struct PluginListing: Encodable {
    var id: String?
    var version: String?
    var runtime: String?
    /// Whether the folder validated (list never loads anything).
    enum Validity: String, Encodable {
        case valid, invalid
    }

    var state: Validity
    var folder: String
    var routes: [String]
    var exports: Int
    /// The signer's name, "unsigned", or why the signature is not trusted (nil: not validated).
    var signer: String?
    /// The signing key's fingerprint, when signed.
    var key: String?
    var problems: [String]

    init(valid plugin: ValidatedPlugin) {
        id = plugin.manifest.id
        version = plugin.manifest.version.description
        runtime = plugin.manifest.runtime.rawValue
        state = .valid
        folder = plugin.folder
        routes = plugin.manifest.routes
        exports = plugin.manifest.exports.count
        signer = plugin.signature.description
        key = plugin.signature.key?.fingerprint
        problems = plugin.warnings.map(\.description)
    }

    init(rejected plugin: RejectedPlugin) {
        id = plugin.id
        state = .invalid
        folder = plugin.folder
        routes = []
        exports = 0
        problems = plugin.problems.map(\.description)
    }
}
