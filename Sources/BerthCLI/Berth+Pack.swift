import ArgumentParser
import BerthRuntime
import Foundation

extension Berth {
    /// `berth pack PATH [--out DIR] [--sign KEY]`: a built library and its manifest → a
    /// drop-in folder, signed with KEY when given.
    struct Pack: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Check a built plugin exactly as the host would, fill in its sha256, and write a drop-in plugin folder.",
            discussion: "PATH is a plugin package (holding plugin.json) or the manifest itself. The library is found next to the manifest, else in .build/debug or .build/release. Nothing is built."
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
                let signed = key.map { " signed by \($0.name) (key \($0.publicKey.shortFingerprint))" } ?? ""
                emitLine("packed \(packed.id) \(packed.version) → \(packed.folder) (sha256 \(packed.sha256))\(signed)")
            } catch let failure as PluginValidationFailure {
                for problem in failure.problems { printError(problem.description) }
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
    }

    static func pack(_ path: String, into out: String, signingKey: PluginSigningKey? = nil) throws -> Packed {
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isFolder) else {
            throw PackError("\(path): no such file or folder")
        }
        let package = isFolder.boolValue ? path : (path as NSString).deletingLastPathComponent
        let manifestPath = isFolder.boolValue ? (path as NSString).appendingPathComponent(PluginValidator.manifestFileName) : path
        guard let data = FileManager.default.contents(atPath: manifestPath),
              var manifest = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any]
        else { throw PackError("\(manifestPath): cannot read a JSON manifest (run `berth validate` for details)") }
        guard let library = manifest["library"] as? String, let id = manifest["id"] as? String else {
            throw PluginValidationFailure(PluginManifest.decode(data, path: manifestPath).problems)
        }
        let candidates = [library, ".build/debug/\(library)", ".build/release/\(library)"].map { (package as NSString).appendingPathComponent($0) }
        guard let built = candidates.first(where: { FileManager.default.fileExists(atPath: $0) }) else {
            throw PackError("\(manifestPath): library: '\(library)' is not built yet (looked in \(candidates.joined(separator: ", ")))")
        }
        // Stage, validate as the host would, then pin the hash and validate again.
        let staging = (NSTemporaryDirectory() as NSString).appendingPathComponent("berth-pack-\(UUID().uuidString.prefix(8))/\(id)")
        defer { try? FileManager.default.removeItem(atPath: (staging as NSString).deletingLastPathComponent) }
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
        return Packed(id: id, version: checked.manifest.version.description, folder: target, sha256: checked.librarySHA256)
    }

    private static func write(_ manifest: [String: Any], to folder: String) throws {
        let data = try JSONSerialization.data(withJSONObject: manifest, options: [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes])
        try data.write(to: URL(fileURLWithPath: (folder as NSString).appendingPathComponent(PluginValidator.manifestFileName)))
    }
}

struct PackError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
