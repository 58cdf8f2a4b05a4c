@_spi(Engine) @testable import BerthRuntime
import Foundation
import Testing

/// The manifest's `capabilities` and `files` fields.
@Suite("Capability manifest fields")
struct CapabilityManifestTests {
    private func decode(_ edit: (inout [String: Any]) -> Void) -> (PluginManifest?, [PluginProblem]) {
        var fields: [String: Any] = [
            "id": "com.example.sample", "name": "Sample", "version": "1.0.0", "abi": "1.0",
            "library": "libSample.so", "entry": "sample_entry_v1", "runtime": "c",
        ]
        edit(&fields)
        let data = try! JSONSerialization.data(withJSONObject: fields)
        return PluginManifest.decode(data, path: "x/plugin.json")
    }

    @Test("an unknown capability is one error line naming it")
    func unknownCapability() {
        let (manifest, problems) = decode { $0["capabilities"] = ["navigate", "navigat"] }
        #expect(manifest == nil)
        #expect(problems.count == 1)
        #expect(problems.first?.description.hasPrefix("x/plugin.json: capabilities[1]: 'navigat' is not a capability (navigate, navigate.any,") == true,
                "\(problems)")
    }

    @Test("a manifest without the field gets every host service and no file or network grant")
    func undeclaredDefault() throws {
        let manifest = try #require(decode { _ in }.0)
        #expect(manifest.capabilities == nil)
        #expect(manifest.grantedCapabilities == [.navigate, .navigateAny, .context, .delegate, .statePersist, .session,
                                                 .servicesProvide, .servicesConsume, .tasks])
        let empty = try #require(decode { $0["capabilities"] = [String]() }.0)
        #expect(empty.grantedCapabilities.isEmpty)
    }

    @Test("files and network declared by an in-process plugin are a warning: they cannot be enforced there")
    func inProcessSandboxGrants() throws {
        let (manifest, problems) = decode {
            $0["isolation"] = "in-process"
            $0["capabilities"] = ["navigate", "network", "files.read"]
        }
        #expect(manifest != nil)
        #expect(problems.map(\.severity) == [.warning, .warning])
        #expect(problems.first?.description.contains("'files.read' cannot be enforced for a plugin that runs in-process") == true, "\(problems)")
    }

    @Test("a files list needs its capability, and each path must be absolute or start with ~/")
    func fileGrants() throws {
        let (granted, none) = decode {
            $0["capabilities"] = ["files.read", "files.write"]
            $0["files"] = ["read": ["~/notes", "/srv/shared"], "write": ["/tmp/out"]]
        }
        #expect(none.isEmpty)
        #expect(granted?.files == FileGrants(read: ["~/notes", "/srv/shared"], write: ["/tmp/out"]))
        let (ignored, warnings) = decode { $0["files"] = ["read": ["/srv/shared"]]; $0["capabilities"] = ["tasks"] }
        #expect(ignored?.files.read == [])
        #expect(warnings.map(\.description) == ["x/plugin.json: files.read: warning: ignored: the capabilities do not include 'files.read'"])
        let (bad, errors) = decode { $0["files"] = ["write": ["relative/path", "/a/../b"]]; $0["capabilities"] = ["files.write"] }
        #expect(bad == nil)
        #expect(errors.map(\.field) == ["files.write[0]", "files.write[1]"])
    }

    @Test("a granted ~/ path is below the host user's home; the worker's policy holds only granted lists")
    func homeRelativeGrant() throws {
        #expect(FileGrants.resolve("~/notes", home: "/home/ana") == "/home/ana/notes")
        #expect(FileGrants.resolve("~", home: "/home/ana") == "/home/ana")
        #expect(FileGrants.resolve("/srv/x", home: "/home/ana") == "/srv/x")
        let manifest = try #require(decode {
            $0["capabilities"] = ["files.read", "network"]
            $0["files"] = ["read": ["~/notes"], "write": ["/srv/out"]]
        }.0)
        let plugin = ValidatedPlugin(folder: "/p", manifestPath: "/p/plugin.json", manifest: manifest, libraryPath: "/p/lib.so",
                                     librarySize: 0, librarySHA256: "", manifestSHA256: "", signature: .unsigned, warnings: [])
        let policy = SandboxPolicy(plugin: plugin, shadowFolder: "/run/x", dataFolder: "/state/plugin-data/x", home: "/home/ana")
        #expect(policy == SandboxPolicy(readPaths: ["/p", "/run/x", "/home/ana/notes"], writePaths: ["/state/plugin-data/x"],
                                        dataFolder: "/state/plugin-data/x", network: true))
    }
}
