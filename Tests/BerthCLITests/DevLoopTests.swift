import Foundation
import Testing
import BerthTestSupport

/// `berth dev`: one command from a save to the screen showing it.
@Suite("berth dev: build, pack, reload and show on every save", .serialized, .blocking, .buildsPackages)
struct DevLoopTests {
    @Test("berth dev on a berth new package shows an edited label in the open screen, keeping its state; a broken build changes nothing")
    func editedLabelShows() throws {
        let workspace = PluginWorkspace()
        let created = try BerthProcess.run(["new", "Hello", "--path", "hello"], in: workspace.root)
        try #require(created.status == 0, "\(created.standardError)")
        let dev = try DevProcess(workspace, package: "hello")
        defer { dev.stop() }

        // The first build is cold (the SDK too): generous, but no timing is asserted.
        try dev.wait(for: "\"Waved 0 time(s)\"", timeout: 600)
        #expect(dev.log.contains("dev: build "), "the phases' times are printed")
        _ = try dev.command(["tap", "1"])

        let source = workspace.root + "/hello/Sources/Hello/Hello.swift"
        let original = try String(contentsOfFile: source, encoding: .utf8)
        try (original + "\nthis is not Swift\n").write(toFile: source, atomically: true, encoding: .utf8)
        try dev.wait(for: "dev: build failed", timeout: 300)
        #expect(dev.log.contains("error:"), "the compiler's errors are shown")
        #expect(try dev.command(["screen"]).contains("\"Waved 1 time(s)\""), "the running generation is untouched")

        try original.replacingOccurrences(of: "Text(\"Waved", with: "Text(\"Edited").write(toFile: source, atomically: true, encoding: .utf8)
        try dev.wait(for: "\"Edited 1 time(s)\"", timeout: 300)
        // The timing line follows the screen it times.
        try dev.wait(for: "saved → shown", timeout: 60)
        #expect(try dev.command(["screen"]).contains("\"Edited 1 time(s)\""))
    }

    @Test("berth dev using a host that is already running ends, saying so, when that host quits")
    func endsWithItsHost() throws {
        let workspace = PluginWorkspace()
        let created = try BerthProcess.run(["new", "Hello", "--path", "hello"], in: workspace.root)
        try #require(created.status == 0, "\(created.standardError)")
        let host = try RunningHost(workspace)
        let dev = try DevProcess(workspace, package: "hello")
        defer { dev.stop() }
        try dev.wait(for: "dev: using the host at", timeout: 60)
        try dev.wait(for: "dev: build ", timeout: 600)
        _ = try host.command(["quit"])
        try dev.wait(for: "has quit; dev stops too", timeout: 60)
        #expect(eventually(timeout: .seconds(60)) { !dev.process.isRunning }, "dev still runs: \(dev.log)")
        #expect(dev.process.terminationStatus == 0)
    }

    @Test("berth dev over a plugin packed before opens its first route; berth restart brings the dev host back with its screen")
    func packedBeforeAndRestart() throws {
        let workspace = PluginWorkspace()
        let created = try BerthProcess.run(["new", "Hello", "--path", "hello"], in: workspace.root)
        try #require(created.status == 0, "\(created.standardError)")
        // A first session packs the plugin into the folder and leaves.
        let first = try DevProcess(workspace, package: "hello", log: "first.log")
        try first.wait(for: "\"Waved 0 time(s)\"", timeout: 600)
        first.stop()

        // The host loads the packed plugin at its start, so the dev loop reloads it: its
        // first route must still be shown (it used to say "0 screen(s) reopened" and stop).
        let dev = try DevProcess(workspace, package: "hello")
        defer { dev.stop() }
        try dev.wait(for: "dev: build ", timeout: 300)
        try dev.wait(for: "\"Waved 0 time(s)\"", timeout: 60)
        #expect(try dev.command(["screens"]).contains("com.example.hello"), "\(dev.log)")

        let restart = try BerthProcess.run(["restart", "--socket", dev.socket], in: workspace.root)
        #expect(restart.status == 0, "\(restart.standardOutput)\(restart.standardError)")
        try dev.wait(for: "restored after restart: 1 plugin(s), 1 screen(s)", timeout: 60)
        #expect(!dev.log.contains("Unknown option"), "\(dev.log)")
        let screens = try dev.waitForReply(["screens"], containing: "com.example.hello", timeout: 60)
        #expect(screens.contains("hello"), "\(screens)")
    }

    @Test("a build that fails because a source was saved while it ran is built again quietly: only the final result is shown")
    func saveDuringBuildRebuildsQuietly() throws {
        // The first make saves hello.c while it "builds" and fails as swift build does then;
        // the next one builds. Deterministic: the save happens inside the build.
        let workspace = try Self.cPackage(firstRecipeLine: "\t@if [ ! -e raced.marker ]; then touch raced.marker; echo '/* saved */' >> hello.c; " +
            "echo \"error: input file '$(CURDIR)/hello.c' was modified during the build\"; exit 1; fi\n")
        let dev = try DevProcess(workspace, package: "hello")
        defer { dev.stop() }

        try dev.wait(for: "dev: build ", timeout: 300)
        try dev.wait(for: "com.example.hello/hello", timeout: 60)
        #expect(FileManager.default.fileExists(atPath: workspace.root + "/hello/raced.marker"), "the racing build ran")
        #expect(!dev.log.contains("was modified during the build"), "\(dev.log)")
        #expect(!dev.log.contains("build failed"), "\(dev.log)")
        #expect(!dev.log.contains("changed: rebuilding"), "\(dev.log)")
    }

    @Test("a build still running when berth dev is killed (SIGKILL) ends with it")
    func buildEndsWithDev() throws {
        // The build writes its pid and then waits far longer than the test.
        let workspace = try Self.cPackage(firstRecipeLine: "\t@echo $$$$ > build.pid; exec sleep 3600\n")
        let dev = try DevProcess(workspace, package: "hello")
        defer { dev.stop() }
        let pidFile = workspace.root + "/hello/build.pid"
        var builder: pid_t = 0
        let started = eventually(timeout: .seconds(300), every: .milliseconds(50)) {
            builder = (try? String(contentsOfFile: pidFile, encoding: .utf8)).flatMap { pid_t($0.trimmingCharacters(in: .whitespacesAndNewlines)) } ?? 0
            return builder > 0
        }
        try #require(started, "the build never started; berth dev printed:\n\(dev.log)")
        #expect(kill(builder, 0) == 0, "the build runs")
        kill(dev.process.processIdentifier, SIGKILL)
        dev.process.waitUntilExit()
        // The sleeping recipe is make's child: make's SIGTERM (its parent-death signal) ends it.
        let ended = eventually(timeout: .seconds(60), every: .milliseconds(50)) { kill(builder, 0) != 0 }
        if !ended { kill(builder, SIGKILL) }
        #expect(ended, "process \(builder) of the build outlived berth dev")
    }

    /// A workspace with `berth new`'s C package `hello`, whose make runs `line` first.
    static func cPackage(firstRecipeLine line: String) throws -> PluginWorkspace {
        let workspace = PluginWorkspace()
        let created = try BerthProcess.run(["new", "Hello", "--lang", "c", "--path", "hello"], in: workspace.root)
        try #require(created.status == 0, "\(created.standardError)")
        let makefile = workspace.root + "/hello/Makefile"
        let original = try String(contentsOfFile: makefile, encoding: .utf8)
        try original.replacingOccurrences(of: "libhello.so: hello.c\n", with: "libhello.so: hello.c\n" + line)
            .write(toFile: makefile, atomically: true, encoding: .utf8)
        return workspace
    }

    @Test("berth dev's REPL in a terminal: what the dev loop prints while the prompt is up goes above it, never onto the prompt's line")
    func devOutputAbovePrompt() throws {
        let workspace = PluginWorkspace()
        let created = try BerthProcess.run(["new", "Hello", "--lang", "c", "--path", "hello"], in: workspace.root)
        try #require(created.status == 0, "\(created.standardError)")
        let terminal = try TerminalSession(["dev", "hello", "--plugins", "plugins", "--socket", workspace.root + "/control.sock",
                                            "--state-dir", "state"], in: workspace.root)
        // `open` (the dev loop's first) answers with the screen it opened.
        try #require(terminal.waitFor("screen 1 com.example.hello/hello", timeout: .seconds(300)), "\(terminal.screen)")
        try #require(terminal.waitFor("berth> ", timeout: .seconds(60)), "\(terminal.screen)")
        // A save while the prompt is shown: the rebuild's lines come from the dev loop's thread.
        let mark = terminal.mark
        let source = workspace.root + "/hello/hello.c"
        try (try String(contentsOfFile: source, encoding: .utf8) + "\n/* saved */\n").write(toFile: source, atomically: true, encoding: .utf8)
        try #require(terminal.waitFor("dev: build ", since: mark, timeout: .seconds(300)), "\(terminal.text(since: mark))")
        #expect(terminal.waitFor("saved → shown", since: mark, timeout: .seconds(60)))
        // Settled once the prompt is the last line again (a deadline, not a timing).
        func lines(_ bytes: [UInt8]) -> [String] {
            var emulator = ScreenEmulator(width: 120, height: 40)
            emulator.apply(bytes)
            return emulator.text.split(separator: "\n").map(String.init)
        }
        let settled = terminal.waitUntil(timeout: .seconds(60)) { lines($0).last { !$0.isEmpty } == "berth>" }
        let shown = lines(terminal.output)
        #expect(settled, "the prompt is drawn again below: \(shown.joined(separator: "\n"))")
        #expect(!shown.contains { $0.hasPrefix("berth> ") && $0.count > "berth> ".count }, "\(shown.joined(separator: "\n"))")
        terminal.type("quit\n")
        #expect(terminal.waitForExit() == 0)
    }
}

/// A `berth dev` process whose own host answers on a socket in the workspace.
private final class DevProcess {
    let process = Process()
    let socket: String
    private let input = Pipe()
    private let outputFile: String

    init(_ workspace: PluginWorkspace, package: String, log logName: String = "dev.log") throws {
        socket = workspace.root + "/control.sock"
        outputFile = workspace.root + "/" + logName
        _ = FileManager.default.createFile(atPath: outputFile, contents: nil)
        let log = FileHandle(forWritingAtPath: outputFile)!
        process.executableURL = URL(fileURLWithPath: BuildProducts.berth)
        process.arguments = ["dev", package, "--plugins", "plugins", "--socket", socket, "--state-dir", "state"]
        process.currentDirectoryURL = URL(fileURLWithPath: workspace.root)
        process.standardInput = input
        process.standardOutput = log
        process.standardError = log
        try process.run()
    }

    var log: String { (try? String(contentsOfFile: outputFile, encoding: .utf8)) ?? "" }

    func command(_ args: [String]) throws -> String {
        let connection = try ControlConnectionForTests(socket)
        defer { connection.close() }
        guard let reply = try connection.request(args) else { throw RunningHostError("no reply to \(args)") }
        return reply
    }

    /// Waits until the terminal output shows `text`.
    func wait(for text: String, timeout: Double) throws {
        // Stops waiting when berth dev has exited (the text can no longer come).
        eventually(timeout: .seconds(timeout), every: .milliseconds(100)) { log.contains(text) || !process.isRunning }
        if log.contains(text) { return }
        throw RunningHostError("'\(text)' was not shown; berth dev printed:\n\(log)")
    }

    /// Repeats `args` until the reply holds `text` (the host answers again after a restart).
    func waitForReply(_ args: [String], containing text: String, timeout: Double) throws -> String {
        var last = ""
        let answered = eventually(timeout: .seconds(timeout), every: .milliseconds(100)) {
            if let reply = try? command(args) { last = reply }
            return last.contains(text)
        }
        if answered { return last }
        throw RunningHostError("\(args) never answered with '\(text)' (last: \(last)); berth dev printed:\n\(log)")
    }

    func stop() {
        if process.isRunning { _ = try? command(["quit"]) }
        eventually(timeout: .seconds(2), every: .milliseconds(20)) { !process.isRunning }
        if process.isRunning { process.terminate() }
        try? input.fileHandleForWriting.close()
    }
}
