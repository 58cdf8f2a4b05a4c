import ArgumentParser
@_spi(Engine) import BerthRuntime
import Foundation

extension Berth {
    /// `berth pack PATH [--out DIR] [--sign KEY]`: a built library and its manifest → a
    /// drop-in folder, signed with KEY when given.
    struct Pack: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Check a built plugin exactly as the host would, fill in its sha256, and write a drop-in plugin folder.",
            discussion: "PATH is a plugin package or its plugin.json. The library is found next to the manifest, else in .build/debug or .build/release; nothing is built. A Swift plugin's id, routes, actions and persisted keys come from its code (berth_describe_v1, run in a child process): plugin.json is optional and may add a name, version, description or requirements. A C plugin's hand-written plugin.json is checked against what its library reports."
        )

        @Argument(help: "A plugin package folder or its plugin.json.", completion: .file())
        var path: String

        @Option(help: ArgumentHelp("Where to write the plugin folder (it goes in OUT/<id>/).", valueName: "DIR"))
        var out = "plugins"

        @Option(help: ArgumentHelp("Sign the packed plugin with this private key (from `berth keygen`): writes plugin.sig.", valueName: "DIR/NAME.private"))
        var sign: String?

        func run() throws {
            do {
                // The key is read first: a wrong path stops before anything is written.
                let key = try sign.map { path throws(SigningKeyError) in try PluginSigningKey(contentsOf: path) }
                let packed = try PluginPacker.pack(path, into: out, signingKey: key)
                for warning in packed.warnings { printWarning(warning) }
                let signed = key.map { " signed by \($0.name) (key \($0.publicKey.shortFingerprint))" } ?? ""
                emitLine("packed \(packed.id) \(packed.version) → \(packed.folder) (sha256 \(packed.sha256))\(signed)")
            } catch let failure as PluginValidationFailure {
                for problem in failure.problems { printError(problem.description) }
                throw ExitStatus.failure
            } catch let mismatches as FactMismatches {
                for line in mismatches.lines { printError(line) }
                throw ExitStatus.failure
            } catch {
                printError("\(error)")
                throw ExitStatus.failure
            }
        }
    }
}

/// Packs a plugin: gathers manifest and library, validates them with the host's own code,
/// pins the library's sha256 in the manifest, and writes `<out>/<id>/`.
enum PluginPacker {
    struct Packed {
        var id: String
        var version: String
        var folder: String
        var sha256: String
        /// What the code uses that its capabilities do not grant (see `CapabilityUse`).
        var warnings: [String] = []
    }

    /// `library`, when given, is the built library to pack (the test kit passes the one its
    /// own build made), instead of looking in the package's `.build`.
    static func pack(_ path: String, into out: String, signingKey: PluginSigningKey? = nil, library builtPath: String? = nil) throws -> Packed {
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isFolder) else {
            throw PackError("\(path): no such file or folder" + nearbyName(of: path))
        }
        let package = isFolder.boolValue ? path : ParentPath.of(path)
        let manifestPath = isFolder.boolValue ? (path as NSString).appendingPathComponent(PluginValidator.manifestFileName) : path
        let isSwiftPackage = FileManager.default.fileExists(atPath: (package as NSString).appendingPathComponent("Package.swift"))
        var manifest: [String: Any] = [:]
        if let data = FileManager.default.contents(atPath: manifestPath) {
            guard let object = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] else {
                throw PackError("\(manifestPath): cannot read a JSON manifest (run `berth validate` for details)")
            }
            manifest = object
        } else if !isSwiftPackage {
            throw PackError("\(manifestPath): no manifest, and \(package) is not a Swift package whose library can describe itself")
        }
        let built = try builtPath ?? builtLibrary(named: manifest["library"] as? String, in: package, manifestPath: manifestPath)
        let library = (built as NSString).lastPathComponent
        // The code's facts: generated into the manifest of a Swift package, checked against
        // the hand-written one of a C plugin.
        let generated = manifest.isEmpty || manifest["runtime"] as? String != PluginRuntimeKind.c.rawValue
        var sourceUses: [(capability: Capability, use: String)] = []
        if generated {
            var description = try LibraryFacts.describe(built, entry: manifest["entry"] as? String)
            if isSwiftPackage, description.describes {
                // Keys in views the describe render never reaches (behind `if`, in rows).
                let stated = SourceFacts.persistedKeys(inPackage: package, library: built)
                description.persist = Array(Set(description.persist ?? []).union(stated)).sorted()
            }
            if isSwiftPackage { sourceUses = SourceFacts.usedCapabilities(inPackage: package, library: built, pluginID: description.id) }
            let mismatches = ManifestFacts(description: description, manifestPath: manifestPath, library: built).fill(&manifest)
            guard mismatches.isEmpty else { throw FactMismatches(lines: mismatches) }
        } else if let mismatches = ManifestFacts.mismatches(of: manifest, manifestPath: manifestPath, library: built) {
            guard mismatches.isEmpty else { throw FactMismatches(lines: mismatches) }
        }
        guard let id = manifest["id"] as? String, manifest["library"] as? String == library else {
            throw PluginValidationFailure(PluginManifest.decode(Data(), path: manifestPath).problems)
        }
        // Stage, validate as the host would, then pin the hash and validate again.
        let staging = (NSTemporaryDirectory() as NSString).appendingPathComponent("berth-pack-\(UUID().uuidString.prefix(8))/\(id)")
        defer { try? FileManager.default.removeItem(atPath: ParentPath.of(staging)) }
        try FileManager.default.createDirectory(atPath: staging, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: built, toPath: (staging as NSString).appendingPathComponent(library))
        manifest["sha256"] = nil
        try write(manifest, to: staging)
        let checked = try PluginValidator.validate(path: staging).get()
        manifest["sha256"] = checked.librarySHA256
        try write(manifest, to: staging)
        let pinned = try PluginValidator.validate(path: staging).get()
        if let signingKey {
            // Signs the manifest bytes as written, so the host checks exactly these.
            try pinned.writeSignature(with: signingKey)
            _ = try PluginValidator.validate(path: staging).get()
        }

        let target = (out as NSString).appendingPathComponent(id)
        try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
        try? FileManager.default.removeItem(atPath: target)
        try FileManager.default.copyItem(atPath: staging, toPath: target)
        return Packed(id: id, version: checked.manifest.version.description, folder: target, sha256: checked.librarySHA256,
                      warnings: CapabilityUse.warnings(for: checked.manifest, sourceUses: sourceUses))
    }

    /// The library to pack: the manifest's, beside it or in `.build`; without a manifest,
    /// the one library in `.build/debug` (else `.build/release`) exporting an entry function.
    private static func builtLibrary(named library: String?, in package: String, manifestPath: String) throws -> String {
        if let library {
            let candidates = libraryCandidates(library, in: package)
            guard let built = candidates.first(where: { FileManager.default.fileExists(atPath: $0) }) else {
                throw PackError("\(manifestPath): library: '\(library)' is not built yet (looked in \(candidates.joined(separator: ", ")))")
            }
            return built
        }
        for configuration in ["debug", "release"] {
            let folder = (package as NSString).appendingPathComponent(".build/\(configuration)")
            let libraries = ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).filter { $0.hasPrefix("lib") && $0.hasSuffix(".so") }
            let plugins = libraries.map { (folder as NSString).appendingPathComponent($0) }.filter { !((try? LibraryDescriber.entrySymbols(in: $0)) ?? []).isEmpty }
            if plugins.count == 1, let plugin = plugins.first { return plugin }
            if plugins.count > 1 { throw PackError("\(folder): \(plugins.count) plugin libraries (\(libraries.sorted().joined(separator: ", "))); name one in plugin.json's library") }
        }
        throw PackError("\(package): no plugin library is built yet (run swift build; looked in .build/debug and .build/release)")
    }

    /// Where a package's library may be: beside the manifest, else where SwiftPM builds it.
    private static func libraryCandidates(_ library: String, in package: String) -> [String] {
        [library, ".build/debug/\(library)", ".build/release/\(library)"].map { (package as NSString).appendingPathComponent($0) }
    }

    /// A package folder (a SwiftPM package, or a manifest whose plain-named library is not
    /// beside it but built in `.build`): packed into a temporary folder, so `validate`
    /// checks what `pack` would write. Nil for a plugin folder, or anything else: a library
    /// that escapes the folder (`../x.so`) or is simply missing is the validator's to name.
    static func stagedForValidation(_ path: String) throws -> (folder: String, cleanup: String)? {
        let manifestPath = (path as NSString).appendingPathComponent(PluginValidator.manifestFileName)
        let library = FileManager.default.contents(atPath: manifestPath)
            .flatMap { ((try? JSONSerialization.jsonObject(with: $0)) as? [String: Any])?["library"] as? String }
        let builtElsewhere = library.map { name in
            !name.contains("/") && !FileManager.default.fileExists(atPath: (path as NSString).appendingPathComponent(name))
                && libraryCandidates(name, in: path).dropFirst().contains { FileManager.default.fileExists(atPath: $0) }
        } == true
        let isPackage = FileManager.default.fileExists(atPath: (path as NSString).appendingPathComponent("Package.swift")) || builtElsewhere
        guard isPackage else { return nil }
        let scratch = (NSTemporaryDirectory() as NSString).appendingPathComponent("berth-validate-\(UUID().uuidString.prefix(8))")
        let packed = try pack(path, into: scratch)
        return (packed.folder, scratch)
    }

    private static func write(_ manifest: [String: Any], to folder: String) throws {
        let data = try JSONSerialization.data(withJSONObject: manifest, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
        try data.write(to: URL(fileURLWithPath: (folder as NSString).appendingPathComponent(PluginValidator.manifestFileName)))
    }
}

/// Facts the code and the manifest state differently: one line each.
struct FactMismatches: Error, CustomStringConvertible {
    var lines: [String]
    var description: String { lines.joined(separator: "\n") }
}

extension PluginPacker {
    /// " (did you mean 'Tasks'?)" when `path`'s folder holds an entry that differs only in
    /// case (`berth new Tasks`, then `pack tasks`) or by a typo; empty otherwise.
    static func nearbyName(of path: String) -> String {
        let name = (path as NSString).lastPathComponent
        let parent = ParentPath.of(path)
        let entries = ((try? FileManager.default.contentsOfDirectory(atPath: parent.isEmpty ? "." : parent)) ?? []).sorted()
        guard let found = entries.first(where: { $0.lowercased() == name.lowercased() }) ?? Suggestion.closest(to: name, among: entries) else { return "" }
        let suggested = path.hasSuffix(name) ? String(path.dropLast(name.count)) + found : found
        return " (did you mean '\(suggested)'?)"
    }
}

struct PackError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
