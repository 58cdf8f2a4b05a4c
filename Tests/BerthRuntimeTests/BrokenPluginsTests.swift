import Foundation
import Testing
@_spi(Engine) @testable import BerthRuntime
import BerthTestSupport

/// The Foundation issue's "done when": a folder holding broken plugins gives one clear
/// error per broken plugin while Counter and Greeter still load.
@Suite("A plugins folder with broken plugins") @MainActor
struct BrokenPluginsTests {
    /// Counter and Greeter, plus one plugin broken in each way.
    static func makeWorkspace() -> PluginWorkspace {
        let workspace = PluginWorkspace()
        workspace.stage("counter.json")
        workspace.stage("greeter.json")

        let truncated = workspace.stage("greeter.json", as: "truncated") { $0["id"] = "com.broken.truncated" }
        let library = (truncated as NSString).appendingPathComponent("libGreeter.so")
        let bytes = FileManager.default.contents(atPath: library)!
        _ = FileManager.default.createFile(atPath: library, contents: bytes.prefix(bytes.count / 2))

        workspace.stage("greeter.json", as: "missing-entry") {
            $0["id"] = "com.broken.missing-entry"
            $0["entry"] = "berth_nobody_entry_v1"
        }
        workspace.stage("greeter.json", as: "missing-export") {
            $0["id"] = "com.broken.missing-export"
            $0["exports"] = [["symbol": "greeter_shout", "params": ["string"], "returns": "string"]]
        }
        workspace.stage("greeter.json", as: "abi-manifest") {
            $0["id"] = "com.broken.abi-manifest"
            $0["abi"] = "2.0"
        }
        workspace.stageFixture(folder: "abi-handshake", entry: "fixture_entry_too_new")
        workspace.stage("greeter.json", as: "escape") {
            $0["id"] = "com.broken.escape"
            $0["library"] = "../greeter-outside.so"
        }
        let symlinked = workspace.stage("greeter.json", as: "symlink-escape") { $0["id"] = "com.broken.symlink-escape" }
        let outside = (workspace.root as NSString).appendingPathComponent("outside.so")
        try! FileManager.default.moveItem(atPath: (symlinked as NSString).appendingPathComponent("libGreeter.so"), toPath: outside)
        try! FileManager.default.createSymbolicLink(atPath: (symlinked as NSString).appendingPathComponent("libGreeter.so"), withDestinationPath: outside)

        let invalidJSON = (workspace.plugins as NSString).appendingPathComponent("invalid-json")
        try! FileManager.default.createDirectory(atPath: invalidJSON, withIntermediateDirectories: true)
        _ = FileManager.default.createFile(atPath: (invalidJSON as NSString).appendingPathComponent("plugin.json"),
                                       contents: Data("{ \"id\": \"com.broken.json\", ".utf8))
        return workspace
    }

    @Test("discovery rejects each broken plugin with one error naming the file and field")
    func discoveryRejects() throws {
        let workspace = Self.makeWorkspace()
        let result = PluginDiscovery.scan([workspace.plugins])
        #expect(Set(result.plugins.map(\.manifest.id)) == ["com.example.counter", "com.example.greeter", "org.berth.fixtures"])
        let byFolder = Dictionary(uniqueKeysWithValues: result.rejected.map { (($0.folder as NSString).lastPathComponent, $0.problems) })
        let expected: [String: (field: String, message: String)] = [
            "truncated": ("elf", "truncated"),
            "missing-entry": ("entry", "symbol 'berth_nobody_entry_v1' is not in libGreeter.so's dynamic symbol table"),
            "missing-export": ("exports[0].symbol", "symbol 'greeter_shout' is not in libGreeter.so's dynamic symbol table"),
            "abi-manifest": ("abi", "ABI 2.0 is newer than this host supports"),
            "escape": ("library", "leaves the plugin folder"),
            "symlink-escape": ("library", "outside the plugin folder"),
            "invalid-json": ("json", "invalid JSON"),
        ]
        #expect(Set(byFolder.keys) == Set(expected.keys))
        for (folder, rule) in expected {
            let problems = try #require(byFolder[folder])
            #expect(problems.count == 1, "\(folder): \(problems)")
            #expect(problems.first?.field == rule.field, "\(folder)")
            #expect(problems.first?.message.contains(rule.message) == true, "\(folder): \(problems.first?.message ?? "")")
            #expect(problems.first?.path.contains(folder) == true, "\(folder): the problem names its file")
        }
    }

    @Test("Counter and Greeter still load; the handshake failure is reported for its plugin only")
    func goodPluginsLoad() throws {
        let workspace = Self.makeWorkspace()
        let host = try workspace.makeHost()
        let errors = host.loadAll()
        #expect(errors.map(\.plugin) == ["org.berth.fixtures"])
        #expect(errors.first?.message.contains("plugin ABI 2.0 is too new") == true)
        #expect(host.generation(of: "com.example.counter")?.isLoaded == true)
        #expect(host.generation(of: "com.example.greeter")?.isLoaded == true)
        #expect(host.rejected.count == 7)
        #expect(try host.generation(of: "com.example.greeter")?.call("greeter_greet", arguments: [.string("Ada")]) == .string("Hello, Ada!"))
    }

    @Test("a sha256 in the manifest is checked before loading")
    func sha256Checked() throws {
        let workspace = PluginWorkspace()
        workspace.stage("greeter.json") { $0["sha256"] = String(repeating: "0", count: 64) }
        let result = PluginDiscovery.scan([workspace.plugins])
        #expect(result.plugins.isEmpty)
        #expect(result.rejected.first?.problems.first?.field == "sha256")
        #expect(result.rejected.first?.problems.first?.message.contains("but the manifest expects 0000") == true)

        let good = PluginWorkspace()
        let folder = good.stage("greeter.json")
        let digest = try #require(PluginDiscovery.scan([good.plugins]).plugins.first?.librarySHA256)
        good.stage("greeter.json", as: "pinned") { $0["sha256"] = digest; $0["id"] = "com.example.pinned" }
        _ = folder
        #expect(PluginDiscovery.scan([good.plugins]).plugins.count == 2)
    }

    @Test("a folder without plugin.json and a manifest naming a missing library each get their own line")
    func missingManifestAndLibrary() throws {
        let workspace = PluginWorkspace()
        let missingLibrary = workspace.stage("greeter.json", as: "no-library") { $0["library"] = "libNobody.so" }
        let empty = (workspace.plugins as NSString).appendingPathComponent("empty")
        try FileManager.default.createDirectory(atPath: empty, withIntermediateDirectories: true)
        guard case .failure(let noManifest) = PluginValidator.validate(path: empty) else { Issue.record("an empty folder validated"); return }
        #expect(noManifest.problems.map(\.message) == ["no plugin.json in this folder"])
        guard case .failure(let noLibrary) = PluginValidator.validate(path: missingLibrary) else { Issue.record("a missing library validated"); return }
        #expect(noLibrary.problems.first?.field == "library")
        #expect(noLibrary.problems.first?.message == "'libNobody.so' does not exist in \(missingLibrary)")
    }

    @Test("a plugin folder reached through a symlink, with its library a symlink inside it, validates at its real path")
    func symlinksInsideTheFolder() throws {
        let workspace = PluginWorkspace()
        let real = workspace.stage("greeter.json", as: "real-greeter") { $0["library"] = "current.so" }
        let fm = FileManager.default
        try fm.moveItem(atPath: real + "/libGreeter.so", toPath: real + "/libGreeter-1.so")
        try fm.createSymbolicLink(atPath: real + "/current.so", withDestinationPath: "libGreeter-1.so")
        let linkedFolder = workspace.root + "/linked-greeter"
        try fm.createSymbolicLink(atPath: linkedFolder, withDestinationPath: real)
        let validated = try PluginValidator.validate(path: linkedFolder).get()
        let realFolder = PluginValidator.realPath(real)
        #expect(validated.libraryPath == realFolder + "/libGreeter-1.so")
        #expect(validated.folder == linkedFolder)
        // Once the link inside points out of the folder, the same plugin is refused.
        try fm.moveItem(atPath: real + "/libGreeter-1.so", toPath: workspace.root + "/elsewhere.so")
        try fm.removeItem(atPath: real + "/current.so")
        try fm.createSymbolicLink(atPath: real + "/current.so", withDestinationPath: workspace.root + "/elsewhere.so")
        guard case .failure(let escaped) = PluginValidator.validate(path: linkedFolder) else { Issue.record("a library outside the folder validated"); return }
        #expect(escaped.problems.map(\.field) == ["library"])
        #expect(escaped.problems.first?.message.contains("outside the plugin folder \(realFolder)") == true)
    }

    @Test("a manifest or a library that is a FIFO is refused at once, not waited on", arguments: ["manifest", "library", "linked library"])
    func fifoIsRefused(what: String) throws {
        let workspace = PluginWorkspace()
        let folder = workspace.stage("greeter.json", as: "fifo-greeter") { manifest in
            if what == "linked library" { manifest["library"] = "current.so" }
        }
        let fifo = folder + (what == "manifest" ? "/plugin.json" : "/libGreeter.so")
        try FileManager.default.removeItem(atPath: fifo)
        #expect(mkfifo(fifo, 0o600) == 0)
        if what == "linked library" { try FileManager.default.createSymbolicLink(atPath: folder + "/current.so", withDestinationPath: "libGreeter.so") }
        // The scan of the folder too (it reads a refused manifest again, for its id).
        let plugins = workspace.plugins
        let outcome = withoutWaitingOn(fifo: fifo, "validation of a \(what)") {
            (PluginValidator.validate(path: folder), PluginDiscovery.scan([plugins]))
        }
        guard let (validation, scan) = outcome, case .failure(let failure) = validation else {
            Issue.record("a \(what) that is a FIFO validated")
            return
        }
        #expect(scan.plugins.isEmpty)
        #expect(scan.rejected.map(\.folder) == [folder])
        #expect(failure.problems.map(\.field) == [what == "manifest" ? "file" : "library"])
        #expect(failure.problems.first?.message.hasSuffix("it is not a regular file") == true, "\(failure)")
    }

    @Test("a wrong entry names the one the library exports; a misspelled export names the nearest one")
    func symbolHints() throws {
        let workspace = PluginWorkspace()
        let folder = workspace.stage("greeter.json", as: "typos") { manifest in
            manifest["entry"] = "berth_greter_entry_v1"
            manifest["exports"] = [["symbol": "greeter_ad", "params": ["int32", "int32"], "returns": "int32"],
                                   ["symbol": "nothing_like_it", "params": [], "returns": "void"]]
        }
        guard case .failure(let failure) = PluginValidator.validate(path: folder) else { Issue.record("typos validated"); return }
        let messages = failure.problems.map(\.message)
        #expect(messages == [
            "symbol 'berth_greter_entry_v1' is not in libGreeter.so's dynamic symbol table (it exports 'berth_greeter_entry_v1')",
            "symbol 'greeter_ad' is not in libGreeter.so's dynamic symbol table (did you mean 'greeter_add'?)",
            "symbol 'nothing_like_it' is not in libGreeter.so's dynamic symbol table",
        ], "\(messages)")
    }

    @Test("two folders with the same id: the second is rejected naming the first")
    func duplicateIDs() {
        let workspace = PluginWorkspace()
        workspace.stage("greeter.json", as: "a-greeter")
        workspace.stage("greeter.json", as: "b-greeter")
        let result = PluginDiscovery.scan([workspace.plugins])
        #expect(result.plugins.count == 1)
        #expect(result.rejected.first?.problems.first?.message.contains("is already provided by") == true)
    }
}
