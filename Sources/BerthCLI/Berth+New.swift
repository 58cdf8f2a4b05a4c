import ArgumentParser
@_spi(Engine) import BerthRuntime
import Foundation

extension Berth {
    /// `berth new NAME [--lang swift|c] [--id ID] [--path DIR]`: a working plugin package.
    struct New: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Create a plugin package that builds with no edits: one screen with a @State value (Swift), or an action, a state value and a lifecycle hook (C).",
            discussion: "Swift packages depend on the SDK package of this Berth checkout (BerthSDK/, package berthsdk) by path, and on nothing else; --berth chooses another checkout. C plugins build with make against berth.h."
        )

        enum Language: String, ExpressibleByArgument, CaseIterable {
            case swift, c
        }

        @Argument(help: "The plugin's name (letters and digits, such as Hello).")
        var name: String

        @Option(help: "The language: swift or c.")
        var lang: Language = .swift

        @Option(help: ArgumentHelp("The plugin id (default: com.example.<name>).", valueName: "ID"))
        var id: String?

        @Option(name: .customLong("path"), help: ArgumentHelp("Where to create the package (default: ./<Name>).", valueName: "DIR"))
        var path: String?

        @Option(help: ArgumentHelp("The Berth checkout the package builds against (default: this berth's).", valueName: "DIR"))
        var berth: String?

        func validate() throws {
            guard let first = name.first, first.isLetter, name.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber) }) else {
                throw ValidationError("'\(name)' is not a plugin name: use letters and digits, starting with a letter")
            }
            if let id, !(id.split(separator: ".").count >= 2 && id.allSatisfy({ $0.isLowercase || $0.isNumber || $0 == "." || $0 == "-" })) {
                throw ValidationError("'\(id)' is not a reverse-DNS id such as com.example.hello")
            }
        }

        func run() throws {
            let root = berth.map { URL(fileURLWithPath: $0).standardizedFileURL.path } ?? PluginTemplate.berthSourceRoot
            if let problem = PluginTemplate.problem(withCheckout: root, for: lang) {
                printError("--berth: \(problem)")
                throw ExitStatus.usage
            }
            let folder = path ?? name
            // The README packs into ../plugins: the route must not be one a plugin there has,
            // nor the id (packing would replace that plugin's folder).
            let plugins = (ParentPath.of(folder) as NSString).appendingPathComponent("plugins")
            let scan = PluginDiscovery.scan([plugins])
            let takenRoutes = Set(scan.plugins.flatMap(\.manifest.routes))
            // Pack writes to ../plugins/<id>: a refused plugin's id, or any folder of that
            // name, would be replaced too.
            let folders = (try? FileManager.default.contentsOfDirectory(atPath: plugins)) ?? []
            let takenIDs = Set(scan.plugins.map(\.manifest.id) + scan.rejected.compactMap(\.id) + folders)
            let template = PluginTemplate(
                name: name, id: id ?? PluginTemplate.unused("com.example.\(name.lowercased())", avoiding: takenIDs), language: lang,
                berthRoot: root, berthBinary: PluginTemplate.berthBinary,
                route: PluginTemplate.unused(name.lowercased(), avoiding: takenRoutes),
                packageFolder: URL(fileURLWithPath: folder).standardizedFileURL.path
            )
            guard !FileManager.default.fileExists(atPath: folder) else {
                printError("\(folder) already exists; choose another --path")
                throw ExitStatus.failure
            }
            if let id, takenIDs.contains(id) {
                emitLine("note: \(plugins) already holds \(id); packing this one there replaces it")
            }
            for (file, contents) in template.files {
                let target = (folder as NSString).appendingPathComponent(file)
                try FileManager.default.createDirectory(atPath: ParentPath.of(target), withIntermediateDirectories: true)
                try contents.write(toFile: target, atomically: true, encoding: .utf8)
            }
            emitLine("created \(template.id) (\(lang.rawValue)) in \(folder), route '\(template.route)':")
            for file in template.files.map(\.path).sorted() { emitLine("  \(file)") }
            emitLine("next: see \(folder)/README.md (build, pack, load)")
        }
    }
}
