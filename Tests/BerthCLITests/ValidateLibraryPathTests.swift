import BerthTestSupport
import Foundation
import Testing

/// Issue 29, item 10: `berth validate --static` on a plugin folder names a library that
/// escapes the folder or is missing, instead of looking for a build.
@Suite("validate --static on a broken library path", .blocking)
struct ValidateLibraryPathTests {
    @Test("a library outside the folder or missing is named as such", arguments: ["../x.so", "missing.so"])
    func namesTheLibrary(_ library: String) throws {
        let workspace = PluginWorkspace()
        let folder = workspace.stage("counter.json") { $0["library"] = library }
        if library.hasPrefix("..") {
            try Data("not a library".utf8).write(to: URL(fileURLWithPath: workspace.plugins + "/x.so"))
        }
        let run = try BerthProcess.run(["validate", "--static", folder], in: workspace.root)
        let text = run.standardOutput + run.standardError
        #expect(run.status == 1)
        #expect(!text.contains("is not built yet"), "\(text)")
        let expected = library.hasPrefix("..") ? "leaves the plugin folder" : "'missing.so' does not exist in"
        #expect(text.contains("library: ") && text.contains(expected), "\(text)")
    }
}
