import BerthTestSupport
import Foundation
import Testing

/// `berth dev --tui`, the real binary in a pseudo-terminal: a save is seen on the frame
/// with no key pressed (issue 32's "done when").
@Suite("berth dev --tui in a terminal", .serialized, .blocking, .buildsPackages)
struct DevTerminalUITests {
    private func screenText(_ bytes: [UInt8]) -> String {
        var emulator = ScreenEmulator(width: 120, height: 40)
        emulator.apply(bytes)
        return emulator.text
    }

    @Test("berth dev --tui on a berth new package: an edited label is drawn without a key press, the terminal restored at the end")
    func editedLabelRedraws() throws {
        let workspace = PluginWorkspace()
        let created = try BerthProcess.run(["new", "Hello", "--path", "hello"], in: workspace.root)
        try #require(created.status == 0, "\(created.standardError)")
        let terminal = try TerminalSession(["dev", "hello", "--tui", "--plugins", "plugins", "--socket", workspace.root + "/control.sock",
                                            "--state-dir", "state"], in: workspace.root)
        // The first build is cold (the SDK too): a generous deadline, no timing asserted.
        let shown = terminal.waitUntil(timeout: .seconds(600)) { screenText($0).contains("Waved 0 time(s)") }
        try #require(shown, "the first screen never showed:\n\(screenText(terminal.output))\n\(terminal.diagnosis())")
        #expect(screenText(terminal.output).contains("[ Wave ]"))

        let source = workspace.root + "/hello/Sources/Hello/Hello.swift"
        let original = try String(contentsOfFile: source, encoding: .utf8)
        try #require(original.contains("Text(\"Waved"))
        let before = terminal.mark
        try original.replacingOccurrences(of: "Text(\"Waved", with: "Text(\"Edited").write(toFile: source, atomically: true, encoding: .utf8)
        // Nothing is typed from here on: the dev loop's reload alone redraws the frame.
        let edited = terminal.waitUntil(timeout: .seconds(300)) { screenText($0).contains("Edited 0 time(s)") }
        #expect(edited, "the edited label never showed:\n\(screenText(terminal.output))")
        #expect(terminal.mark > before)
        #expect(!screenText(terminal.output).contains("Waved 0 time(s)"))

        terminal.type("\u{03}")
        #expect(terminal.waitForExit() == 0)
        let modes = try #require(terminal.localModes)
        #expect(modes & tcflag_t(ECHO) != 0 && modes & tcflag_t(ICANON) != 0, "the terminal's line discipline is back")
    }

    @Test("berth dev --tui: a failed build's errors are shown in a panel with file and line; the next good build takes the panel away")
    func failedBuildPanel() throws {
        let workspace = PluginWorkspace()
        let created = try BerthProcess.run(["new", "Hello", "--lang", "c", "--path", "hello"], in: workspace.root)
        try #require(created.status == 0, "\(created.standardError)")
        let terminal = try TerminalSession(["dev", "hello", "--tui", "--plugins", "plugins", "--socket", workspace.root + "/control.sock",
                                            "--state-dir", "state"], in: workspace.root)
        let opened = terminal.waitUntil(timeout: .seconds(300)) { screenText($0).contains("com.example.hello/hello") }
        try #require(opened, "the screen never showed:\n\(screenText(terminal.output))")

        let source = workspace.root + "/hello/hello.c"
        let original = try String(contentsOfFile: source, encoding: .utf8)
        // The file ends with a newline: the appended line's number is the count of pieces.
        let brokenLine = original.split(separator: "\n", omittingEmptySubsequences: false).count
        try (original + "this is not C;\n").write(toFile: source, atomically: true, encoding: .utf8)
        let failed = terminal.waitUntil(timeout: .seconds(300)) { bytes in
            let text = screenText(bytes)
            return text.contains("✖ build failed (make -C hello): ") && text.contains("hello.c:\(brokenLine):")
        }
        #expect(failed, "no panel naming hello.c:\(brokenLine):\n\(screenText(terminal.output))")
        let panel = screenText(terminal.output).split(separator: "\n").first { $0.contains("hello.c:\(brokenLine):") }
        #expect(panel?.contains("error:") == true, "\(panel ?? "")")

        try (original + "/* fixed */\n").write(toFile: source, atomically: true, encoding: .utf8)
        let gone = terminal.waitUntil(timeout: .seconds(300)) { bytes in
            let text = screenText(bytes)
            return !text.contains("build failed") && !text.contains("hello.c:\(brokenLine):")
        }
        #expect(gone, "the panel stayed after a good build:\n\(screenText(terminal.output))")
        #expect(screenText(terminal.output).contains("com.example.hello/hello"))

        terminal.type("\u{03}")
        #expect(terminal.waitForExit() == 0)
    }
}
