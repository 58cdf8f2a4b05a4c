import Foundation
import Testing
@_spi(Engine) @testable import BerthRuntime
import BerthTestSupport

/// Rules found in review: each one a way a running host could be fooled or left confused.
@Suite("Loader hardening") @MainActor
struct HardeningTests {
    @Test("the v1.0 minimum table size is the end of v1.0's last field, not this host's table size")
    func minimumSize() {
        #expect(PluginTable.v1MinimumSize == 112)
    }

    /// A plugin whose library is swapped for another valid ELF after validation.
    struct Swap: Sendable, CustomTestStringConvertible {
        let manifest: String
        let plugin: String
        let library: String
        let replacement: String
        /// Whether the copy is large enough for the two-thread path (512 KB, HashingCopy).
        let overlapped: Bool
        var testDescription: String { "\(library) → \(replacement)" }
    }

    /// Greeter's bytes (28 KB) were kept by validation, so its shadow copy is written from
    /// them; Counter's (above HashingCopy's overlap size, so none kept) is hashed on a second
    /// thread while it is written, and the mismatch refused.
    @Test("a library replaced after validation never runs: its validated bytes load, or the load is refused", arguments: [
        Swap(manifest: "greeter.json", plugin: "com.example.greeter", library: "libGreeter.so", replacement: "libBerthFixtures.so", overlapped: false),
        Swap(manifest: "counter.json", plugin: "com.example.counter", library: "libCounter.so", replacement: "libInbox.so", overlapped: true),
    ])
    func changedAfterValidation(_ swap: Swap) throws {
        let workspace = PluginWorkspace()
        workspace.stage(swap.manifest)
        let host = try workspace.makeHost()
        // Validated at discovery; now swap the bytes (a valid ELF, but not the one checked).
        let library = (workspace.plugins as NSString).appendingPathComponent("\(swap.plugin)/\(swap.library)")
        let size = try FileManager.default.attributesOfItem(atPath: BuildProducts.library(swap.replacement))[.size] as? Int ?? 0
        #expect((size >= 512 * 1024) == swap.overlapped)
        #expect((host.plugins[swap.plugin]?.source.libraryBytes != nil) == !swap.overlapped, "bytes kept for a small library only")
        try FileManager.default.removeItem(atPath: library)
        try FileManager.default.copyItem(atPath: BuildProducts.library(swap.replacement), toPath: library)
        guard swap.overlapped else {
            // Validation kept this library's bytes: those load, and the replacement never runs.
            let generation = try host.load(swap.plugin)
            let loaded = try Data(contentsOf: URL(fileURLWithPath: generation.shadowPath))
            #expect(loaded == (try Data(contentsOf: URL(fileURLWithPath: BuildProducts.library(swap.library)))))
            return
        }
        #expect { try host.load(swap.plugin) } throws: { error in
            (error as! LoaderError).message.contains("changed after it was validated")
        }
        #expect(host.generation(of: swap.plugin) == nil)
    }

    @Test("a reload whose new version a dependent does not accept is refused; the old manifest stays")
    func reloadBreaksDependent() throws {
        let workspace = PluginWorkspace()
        let greeter = workspace.stage("greeter.json")
        workspace.stage("inbox.json")
        let host = try workspace.makeHost()
        try host.load("com.example.inbox")
        var manifest = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: greeter + "/plugin.json"))) as! [String: Any]
        manifest["version"] = "2.0.0"
        workspace.write(manifest: manifest, in: greeter)
        #expect { try host.reload("com.example.greeter") } throws: { error in
            (error as! LoaderError).message.contains("com.example.inbox requires com.example.greeter >=1.0.0 <2.0.0 but the new version is 2.0.0")
        }
        #expect(host.plugins["com.example.greeter"]?.source.manifest.version.description == "1.2.0")
        #expect(host.generation(of: "com.example.greeter")?.number == 1)
    }

    @Test("a failed load is one failed event, and the manifest of a failed reload is not kept")
    func failedReloadKeepsManifest() throws {
        let workspace = PluginWorkspace()
        let folder = workspace.stageFixture(folder: "fixture")
        let host = try workspace.makeHost()
        try host.load("org.berth.fixtures")
        var manifest = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: folder + "/plugin.json"))) as! [String: Any]
        manifest["entry"] = "fixture_entry_too_new"
        manifest["version"] = "1.1.0"
        workspace.write(manifest: manifest, in: folder)
        #expect(throws: LoaderError.self) { try host.reload("org.berth.fixtures") }
        #expect(host.events.filter { $0.kind == .failed }.count == 1)
        #expect(host.plugins["org.berth.fixtures"]?.source.manifest.version.description == "1.0.0")
    }

    @Test("an export whose returns is not a type name is an error, not void")
    func returnsMustBeAString() {
        let json = #"{"id":"com.a.b","name":"x","version":"1.0.0","abi":"1.0","library":"l.so","entry":"e","runtime":"c","exports":[{"symbol":"f","returns":5}]}"#
        let (manifest, problems) = PluginManifest.decode(Data(json.utf8), path: "p.json")
        #expect(manifest == nil)
        #expect(problems.map(\.field) == ["exports[0].returns"])
    }

    @Test("a runtime folder parent that is a symlink is refused")
    func symlinkParentRefused() throws {
        let workspace = PluginWorkspace()
        let real = (workspace.root as NSString).appendingPathComponent("real")
        let link = (workspace.root as NSString).appendingPathComponent("link")
        try FileManager.default.createDirectory(atPath: real, withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: real)
        #expect { try RuntimeDirectory(base: link) } throws: { error in
            (error as! LoaderError).message.contains("not a plain folder")
        }
    }

    @Test("a runtime folder parent open to others is closed to mode 0700")
    func openParentClosed() throws {
        let workspace = PluginWorkspace()
        let parent = (workspace.root as NSString).appendingPathComponent("shared")
        try FileManager.default.createDirectory(atPath: parent, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o777])
        _ = try RuntimeDirectory(base: parent)
        let mode = try FileManager.default.attributesOfItem(atPath: parent)[.posixPermissions] as? Int
        #expect(mode == 0o700)
    }

    @Test("integer arguments accept ASCII digits only")
    func asciiDigits() throws {
        #expect(throws: FFIError(.badArgument, "'１２' is not an integer")) { try FFIValue.parse("１２", as: .int32) }
        #expect(try FFIValue.parse("+infinity", as: .double) == .double(.infinity))
    }
}
