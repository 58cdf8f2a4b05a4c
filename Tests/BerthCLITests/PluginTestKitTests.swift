import Foundation
import Testing
import BerthTestSupport

/// The test kit as a plugin author meets it: `berth new` writes a package whose test uses
/// BerthTesting, `swift test` there builds and passes it (in both isolation modes, on the
/// library that run built), and the same test fails once the label it taps changes.
/// Slow (a cold build of the SDK, the kit and the plugin): CI runs it once, not per mode.
@Suite("BerthTesting: the test berth new writes", .serialized, .blocking, .buildsPackages)
struct PluginTestKitTests {
    @Test("first-plugin.md shows the Package.swift, source and test berth new writes (the SDK's path aside)")
    func tutorialShowsWhatBerthNewWrites() throws {
        let workspace = PluginWorkspace()
        let created = try BerthProcess.run(["new", "Hello", "--path", "hello"], in: workspace.root)
        try #require(created.status == 0, "\(created.standardError)")
        let blocks = try TutorialBlocks.load().filter { $0.group == "new" }
        for path in ["Package.swift", "Sources/Hello/Hello.swift", "Tests/HelloTests/HelloTests.swift"] {
            let block = try #require(blocks.first { $0.path == path }, "first-plugin.md has no block file=\(path) group=new")
            let written = try String(contentsOfFile: workspace.root + "/hello/" + path, encoding: .utf8)
            #expect(TutorialBlocks.pointedAtCheckout(written) == TutorialBlocks.pointedAtCheckout(block.contents), "\(path) differs:\n\(written)")
        }
    }

    @Test("berth new's test passes with swift test, fails naming the label when the button's label changes, and names the plugin's line when it traps in process")
    func generatedTestPassesThenFailsOnLabelChange() throws {
        let workspace = PluginWorkspace()
        let created = try BerthProcess.run(["new", "Hello", "--path", "hello"], in: workspace.root)
        try #require(created.status == 0, "\(created.standardError)")
        let package = workspace.root + "/hello"
        let manifest = try String(contentsOfFile: package + "/Package.swift", encoding: .utf8)
        #expect(manifest.contains(".package(path: \"../") && !manifest.contains("path: \"/"), "Package.swift names the SDK by a relative path:\n\(manifest)")
        // A golden frame in Frames/ is no source SwiftPM warns about, and the folder exists.
        let frames = package + "/Tests/HelloTests/Frames"
        try "a golden frame\n".write(toFile: frames + "/waved.txt", atomically: true, encoding: .utf8)

        let started = Date()
        // One compiler at a time (-j 1): two at once beside the rest of the suite took a run
        // with 1 GiB of memory past it, and the kernel killed one (signal 9).
        let (passed, log) = try ToolProcess.run("/usr/bin/env", ["swift", "test", "-j", "1", "--package-path", package], in: workspace.root)
        print("first swift test of a berth new package: \(Int(Date().timeIntervalSince(started))) s")
        #expect(passed == 0, "swift test of the new package failed:\n\(log)")
        #expect(!log.contains("unhandled") && !log.contains("Invalid Exclude"), "SwiftPM warned about the test target's files:\n\(log)")
        #expect(log.contains("\"Wave counts the waves, by its label and by Enter\" with 2 test cases passed"), "\(log)")
        for mode in ["in-process", "worker"] {
            #expect(log.contains("isolation → \(mode)"), "no run with the plugin \(mode):\n\(log)")
        }

        let source = package + "/Sources/Hello/Hello.swift"
        let original = try String(contentsOfFile: source, encoding: .utf8)
        try original.replacingOccurrences(of: "Button(\"Wave\")", with: "Button(\"Hi\")").write(toFile: source, atomically: true, encoding: .utf8)
        // A golden frame that differs: its failure names the line of the expectFrame call.
        let frameTest = """
            import BerthTesting
            import Testing

            @Test func opened() async throws {
                let plugin = try await PluginUnderTest(isolation: .inProcess)
                try await plugin.open("hello")
                try plugin.expectFrame("waved")
            }

            """
        try frameTest.write(toFile: package + "/Tests/HelloTests/FrameTests.swift", atomically: true, encoding: .utf8)
        let (failed, failedLog) = try ToolProcess.run("/usr/bin/env", ["swift", "test", "-j", "1", "--package-path", package], in: workspace.root)
        #expect(failed != 0, "the test still passed with the label changed:\n\(failedLog)")
        // The failure names the line of the failing call, not only the @Test's.
        let test = try String(contentsOfFile: package + "/Tests/HelloTests/HelloTests.swift", encoding: .utf8)
        let tapLine = try #require(test.split(separator: "\n", omittingEmptySubsequences: false).firstIndex { $0.contains("plugin.tap(\"Wave\")") }) + 1
        for mode in ["in-process", "worker"] {
            let failure = failedLog.split(separator: "\n").contains { line in
                line.contains("isolation → \(mode) at HelloTests.swift")
                    && line.contains("HelloTests.swift:\(tapLine): no control labelled 'Wave' on the screen; its labels: 'Hi'")
            }
            #expect(failure, "no failure naming the label and the tap's line \(tapLine) with the plugin \(mode):\n\(failedLog)")
        }
        #expect(failedLog.contains("FrameTests.swift:7: the frame differs from Frames/waved.txt, line 1: expected 'a golden frame', got ' berth"),
                "no failure naming the expectFrame line:\n\(failedLog)")
        try FileManager.default.removeItem(atPath: package + "/Tests/HelloTests/FrameTests.swift")

        // A trap in the button's closure ends a host that runs the plugin in its process:
        // the failure names the line of Hello.swift that trapped, not the SDK's.
        let crashing = original.replacingOccurrences(of: "waves += 1", with: "waves += [1][waves + 1]")
        try crashing.write(toFile: source, atomically: true, encoding: .utf8)
        let line = try #require(crashing.split(separator: "\n", omittingEmptySubsequences: false).firstIndex { $0.contains("[1][waves + 1]") }) + 1
        let (crashed, crashLog) = try ToolProcess.run("/usr/bin/env", ["swift", "test", "-j", "1", "--package-path", package], in: workspace.root)
        #expect(crashed != 0, "the test passed with a trap in the button:\n\(crashLog)")
        let named = crashLog.split(separator: "\n").contains { reported in
            reported.contains("isolation → in-process at HelloTests.swift") && reported.contains("HelloTests.swift:\(tapLine): berth test-host ended during 'tap'")
                && reported.contains(", at Sources/Hello/Hello.swift:\(line) in ") && reported.contains("Fatal error: Index out of range")
        }
        #expect(named, "no in-process failure naming Hello.swift:\(line):\n\(crashLog)")
    }
}
