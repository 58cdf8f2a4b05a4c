import Foundation
import Testing
import BerthTestSupport
@testable import BerthCLI
#if canImport(Glibc)
import Glibc
#endif

/// Hot reload on a running host: a real `berth run --watch` process per test, driven
/// through its control socket and its watched folder.
@Suite("Hot reload on a running host", .serialized, .blocking)
struct HotReloadTests {
    private func library(_ workspace: PluginWorkspace, _ folder: String, _ name: String) -> String {
        "\(workspace.plugins)/\(folder)/\(name)"
    }

    @Test("a plugin folder dropped in is validated and loaded")
    func dropIn() throws {
        let workspace = PluginWorkspace()
        let host = try RunningHost(workspace)
        workspace.stage("greeter.json")
        try host.wait(for: "com.example.greeter  1.2.0    c        loaded      1")
        #expect(try host.command(["call", "com.example.greeter", "greeter_add", "2", "3"]).contains("greeter_add → 5"))
    }

    @Test("a dropped-in plugin that is refused is named by its first error, not a warning before it")
    func dropInNamesFirstError() throws {
        let workspace = PluginWorkspace()
        let host = try RunningHost(workspace)
        workspace.stage("greeter.json", as: "typo") { manifest in
            manifest["versoin"] = manifest["version"]
            manifest["version"] = nil
        }
        let events = try host.wait(for: "typo: not loaded", in: ["events"])
        let line = try #require(events.split(separator: "\n").first { $0.contains("typo: not loaded") })
        #expect(line.contains("plugin.json: version: "), "\(line)")
        #expect(!line.contains("versoin"), "\(line)")
    }

    @Test("a replaced library is reloaded: a new generation, the open screen reopened in place")
    func replacedLibrary() throws {
        let workspace = PluginWorkspace()
        workspace.stage("counter.json")
        let host = try RunningHost(workspace)
        try host.wait(for: "com.example.counter  1.0.0    swift    loaded      1")
        _ = try host.command(["open", "counter"])
        // A different file (same code, one more byte at the end), put in place by rename,
        // as build tools and editors do.
        let path = library(workspace, "com.example.counter", "libCounter.so")
        var bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        bytes.append(0)
        try bytes.write(to: URL(fileURLWithPath: path + ".new"))
        #expect(rename(path + ".new", path) == 0)
        let tree = try host.wait(for: "gen 2", in: ["tree"])
        #expect(tree.contains("1 com.example.counter/counter  gen 2  active  tasks 1  ◀ visible"))
        #expect(host.log.contains("com.example.counter: generation 1 → 2 in "))
    }

    @Test("a library written slowly in chunks is never opened half-written; it loads once whole")
    func chunkedWrite() throws {
        let workspace = PluginWorkspace()
        let host = try RunningHost(workspace)
        let whole = try Data(contentsOf: URL(fileURLWithPath: BuildProducts.library("libGreeter.so")))
        let folder = workspace.plugins + "/greeter"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try Data(contentsOf: URL(fileURLWithPath: BuildProducts.manifest("greeter.json"))).write(to: URL(fileURLWithPath: folder + "/plugin.json"))
        // O_CLOEXEC: a child another test spawns meanwhile must not inherit the write
        // descriptor. One that lived on would be a writer the host rightly waits for forever.
        let descriptor = open(folder + "/libGreeter.so", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        try #require(descriptor >= 0, "open: \(String(cString: strerror(errno)))")
        let handle = FileHandle(fileDescriptor: descriptor, closeOnDealloc: true)
        let half = whole.count / 2
        handle.write(whole.subdata(in: 0..<half))
        // The writer holds the half-written file open until the host has looked at it and
        // said it waits: what the host must see is the open writer, not a pause long enough
        // for it (on a loaded machine no pause is).
        let pid = getpid()
        let waited = eventually(timeout: .seconds(60), every: .milliseconds(20)) { Self.waitsForWriter(pid, in: host.log) }
        #expect(waited, "the host saw the open writer and waited: \(host.log)")
        #expect(!host.log.contains("generation 1 loaded"), "nothing loaded while it was half-written")
        handle.write(whole.subdata(in: half..<whole.count))
        try handle.close()
        try host.wait(for: "com.example.greeter  1.2.0    c        loaded      1")
        let log = host.log
        #expect(!log.contains("dlopen"), "nothing half-written reached dlopen")
        #expect(log.components(separatedBy: "generation 1 loaded").count == 2, "loaded exactly once")
    }

    /// Whether `log` has a "waiting for process … to finish writing" line naming `pid`
    /// (another process may hold the file for a moment too: a child forked before its exec
    /// closed the descriptor).
    private static func waitsForWriter(_ pid: Int32, in log: String) -> Bool {
        log.split(separator: "\n").contains { line in
            guard let start = line.range(of: "waiting for process "), let end = line.range(of: " to finish writing") else { return false }
            return line[start.upperBound..<end.lowerBound].split(separator: ",").contains { $0.trimmingCharacters(in: .whitespaces) == String(pid) }
        }
    }

    @Test("an mmap-style writer (final size, header and symbols first, the middle a second later) is waited for; the library loads once whole")
    func sparseWriter() throws {
        let workspace = PluginWorkspace()
        let host = try RunningHost(workspace)
        let folder = workspace.plugins + "/greeter"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try Data(contentsOf: URL(fileURLWithPath: BuildProducts.manifest("greeter.json"))).write(to: URL(fileURLWithPath: folder + "/plugin.json"))
        // Another process writes it: the whole size first, both ends, then the middle once
        // the host has said it waits for it (a line on its stdin), not after a pause.
        let writer = Process()
        let go = Pipe()
        writer.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        writer.standardInput = go
        writer.arguments = ["-c", """
            import sys
            src = open(sys.argv[1], 'rb').read(); n = len(src); a, b = n // 4, n - n // 4
            f = open(sys.argv[2], 'w+b'); f.truncate(n)
            f.seek(0); f.write(src[:a]); f.seek(b); f.write(src[b:]); f.flush()
            sys.stdin.readline()
            f.seek(a); f.write(src[a:b]); f.close()
            """, BuildProducts.library("libGreeter.so"), folder + "/libGreeter.so"]
        try writer.run()
        let waited = eventually(timeout: .seconds(60), every: .milliseconds(20)) { Self.waitsForWriter(writer.processIdentifier, in: host.log) }
        #expect(waited, "\(host.log)")
        #expect(!host.log.contains("generation 1 loaded"), "nothing loaded while its middle was missing")
        go.fileHandleForWriting.write(Data("go\n".utf8))
        try go.fileHandleForWriting.close()
        writer.waitUntilExit()
        #expect(writer.terminationStatus == 0)
        try host.wait(for: "com.example.greeter  1.2.0    c        loaded      1")
        let log = host.log
        #expect(log.components(separatedBy: "generation 1 loaded").count == 2, "loaded exactly once")
        #expect(!log.contains("canary") && !log.contains("trial worker"), "nothing half-written was even tried")
    }

    @Test("a corrupt library is reported and the old generation stays active")
    func corruptLibrary() throws {
        let workspace = PluginWorkspace()
        workspace.stage("greeter.json")
        let host = try RunningHost(workspace)
        try host.wait(for: "com.example.greeter  1.2.0    c        loaded      1")
        try Data(repeating: 0x42, count: 100_000).write(to: URL(fileURLWithPath: library(workspace, "com.example.greeter", "libGreeter.so")))
        try host.wait(for: "generation 1 stays", in: ["events"])
        #expect(RunningHost.squeezed(try host.command(["plugins"])).contains("com.example.greeter 1.2.0 c loaded 1"))
        #expect(try host.command(["call", "com.example.greeter", "greeter_add", "1", "1"]).contains("greeter_add → 2"))
        // A valid (and different) file later is picked up.
        var valid = try Data(contentsOf: URL(fileURLWithPath: BuildProducts.library("libGreeter.so")))
        valid.append(0)
        try valid.write(to: URL(fileURLWithPath: library(workspace, "com.example.greeter", "libGreeter.so")))
        let events = try host.wait(for: "generation 1 → 2", in: ["events"])
        #expect(events.contains("generation 1 → 2"))
    }

    /// Issue 29, item 11: invalid new content leaves the running generation and its screens
    /// alone, also when the new manifest names another id. (It ran in the test process before,
    /// where the watcher's turns waited for the main actor every suite shares: twice, on a
    /// loaded machine, past 420 s.)
    @Test("a manifest switched to an id the library does not answer to leaves the running plugin and its open screen alone")
    func invalidNewID() throws {
        let workspace = PluginWorkspace()
        let folder = workspace.stageProbe()
        let host = try RunningHost(workspace)
        try host.wait(for: "org.berth.probe: generation 1 loaded", in: ["events"], timeout: 120)
        let opened = try host.command(["open", "org.berth.probe/probe"])
        #expect(opened.contains("screen 1"), "\(opened)")
        // The same library under a manifest that now says another id: it validates, but the
        // library's table says org.berth.probe, so it cannot load.
        let data = try Data(contentsOf: URL(fileURLWithPath: folder + "/plugin.json"))
        var manifest = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        manifest["id"] = "org.berth.renamed"
        workspace.write(manifest: manifest, in: folder)
        let events = try host.wait(for: "org.berth.probe generation 1 stays", in: ["events"], timeout: 120)
        #expect(events.contains("now holds org.berth.renamed, which did not load"), "\(events)")
        let plugins = RunningHost.squeezed(try host.command(["plugins"]))
        #expect(plugins.contains("org.berth.probe 1.0.0 c loaded 1"), "\(plugins)")
        #expect(!plugins.contains("org.berth.renamed"), "\(plugins)")
        let screens = RunningHost.squeezed(try host.command(["screens"]))
        #expect(screens.contains("1 probe org.berth.probe 1"), "the open screen stays: \(screens)")
    }

    @Test("a removed folder is unloaded, its screens closed first")
    func removedFolder() throws {
        let workspace = PluginWorkspace()
        workspace.stage("greeter.json")
        let host = try RunningHost(workspace)
        try host.wait(for: "loaded      1")
        _ = try host.command(["open", "hello"])
        try FileManager.default.removeItem(atPath: workspace.plugins + "/com.example.greeter")
        let events = try host.wait(for: "generation 1 unloaded", in: ["events"])
        let closing = events.split(separator: "\n").filter { $0.contains("screen 1: inactive") || $0.contains("screen 1: released") || $0.contains("unloaded") }
        #expect(closing.count == 3)
        #expect(closing.last?.contains("unloaded") == true, "screens closed before the image went")
        #expect(try host.command(["plugins"]).contains("com.example.greeter") == false)
    }

    @Test("berth reload over the socket, and a broken reload rolls back with the screens in place")
    func reloadOverSocket() throws {
        let workspace = PluginWorkspace()
        workspace.stage("counter.json")
        let host = try RunningHost(workspace, arguments: ["--debounce-ms", "60000"])  // the watcher stays out of this test
        try host.wait(for: "loaded      1")
        _ = try host.command(["open", "counter"])
        let reload = try BerthProcess.run(["reload", "--socket", host.socket, "com.example.counter"], in: workspace.root)
        #expect(reload.status == 0, "\(reload.standardError)")
        #expect(reload.standardOutput.contains("com.example.counter: generation 1 → 2 in "))
        #expect(reload.standardOutput.contains("1 screen(s) reopened (validate "))
        // --json: one JSON document with the new generation and each phase's time.
        let timed = try BerthProcess.run(["reload", "--socket", host.socket, "com.example.counter", "--json"], in: workspace.root)
        #expect(timed.status == 0, "\(timed.standardError)")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(timed.standardOutput.utf8)) as? [String: Any])
        #expect(report["plugin"] as? String == "com.example.counter")
        #expect(report["generation"] as? Int == 3)
        #expect((report["total_ms"] as? Double) != nil)
        let phases = try #require(report["phases_ms"] as? [String: Double])
        #expect(Set(phases.keys) == ["validate", "canary", "copy+hash", "dlopen", "handshake", "close old screens", "reopen", "restore"])
        // Break the next generation: a library whose entry answers for another plugin id.
        let folder = workspace.plugins + "/com.example.counter"
        try FileManager.default.removeItem(atPath: folder + "/libCounter.so")
        try FileManager.default.copyItem(atPath: BuildProducts.library("libInbox.so"), toPath: folder + "/libCounter.so")
        var manifest = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: folder + "/plugin.json"))) as! [String: Any]
        manifest["entry"] = "berth_inbox_entry_v1"
        manifest["exports"] = []
        workspace.write(manifest: manifest, in: folder)
        let broken = try BerthProcess.run(["reload", "--socket", host.socket, "com.example.counter"], in: workspace.root)
        #expect(broken.status == 1)
        #expect(broken.standardError.contains("reload failed at load"))
        #expect(broken.standardError.contains("rolled back to generation 3"))
        #expect(try host.command(["tree"]).contains("1 com.example.counter/counter  gen 3  active"))
    }

    @Test("a client of another uid, let through by the socket's mode, is refused by the peer check and told so, every time")
    func otherUID() throws {
        try #require(getuid() == 0, "this test runs a client as uid 65534 through setpriv, which needs root (CI runs as root)")
        let workspace = PluginWorkspace()
        let host = try RunningHost(workspace)
        try host.wait(for: "runtime folder", in: ["status"])
        // Open the way on purpose, so the file's 0600 mode is not what refuses the client.
        #expect(chmod(workspace.root, 0o755) == 0)
        #expect(chmod(host.socket, 0o666) == 0)
        func asNobody(_ arguments: [String]) throws -> (status: Int32, errors: String) {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
            process.arguments = ["--reuid=65534", "--regid=65534", "--clear-groups", BuildProducts.berth] + arguments
            let errors = Pipe()
            process.standardError = errors
            process.standardOutput = Pipe()
            try process.run()
            let message = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            return (process.terminationStatus, message)
        }
        let refusal = "error: refused: the client runs as uid 65534, this host as uid 0\n"
        for attempt in 1...10 {
            let status = try asNobody(["status", "--socket", host.socket])
            #expect(status.status == 1, "attempt \(attempt)")
            #expect(status.errors == refusal, "attempt \(attempt)")
        }
        let follow = try asNobody(["events", "--follow", "--socket", host.socket])
        #expect(follow.status == 1)
        #expect(follow.errors == refusal)
        #expect(try host.command(["status"]).contains("loaded:"), "the host still answers its own user")
    }

    @Test("100 garbage and truncated requests: the host still answers")
    func garbage() throws {
        let workspace = PluginWorkspace()
        workspace.stage("greeter.json")
        let host = try RunningHost(workspace)
        try host.wait(for: "loaded      1")
        var errorsSeen = 0
        for index in 0..<100 {
            let connection = try ControlConnectionForTests(host.socket)
            switch index % 5 {
            case 0: connection.sendRaw(Array("GET / HTTP/1.1\r\n\r\n".utf8))
            case 1: connection.sendRaw([0xFF, 0xFF, 0xFF, 0xFF])          // a 4 GiB frame
            case 2: connection.sendRaw([0, 0, 0, 50] + Array("{\"args\"".utf8))  // cut short, then gone
            case 3: connection.sendFrame(Array("not json".utf8))
            default: connection.sendFrame(Array("{\"args\": []}".utf8))
            }
            if index % 5 != 2, let reply = try connection.readReply(), reply.contains("error: malformed request") { errorsSeen += 1 }
            connection.close()
        }
        #expect(errorsSeen >= 60, "every whole-but-wrong request got a clear error (\(errorsSeen))")
        #expect(try host.command(["call", "com.example.greeter", "greeter_add", "40", "2"]).contains("greeter_add → 42"))
    }

    @Test("200 reload cycles with open screens: no task left behind; in process memory is bounded apart from retired images, isolated nothing is retired",
          arguments: ["in-process", "process"])
    func twoHundredReloads(isolation: String) throws {
        let workspace = PluginWorkspace()
        workspace.stage("counter.json")
        workspace.stage("greeter.json")
        let host = try RunningHost(workspace, arguments: ["--debounce-ms", "60000", "--isolation", isolation])
        try host.wait(for: "com.example.greeter  1.2.0    c        loaded      1")
        try host.wait(for: "com.example.counter  1.0.0    swift    loaded      1")
        _ = try host.command(["open", "counter"])
        _ = try host.command(["open", "hello"])
        _ = try host.command(["present", "counter"])
        let connection = try ControlConnectionForTests(host.socket)
        defer { connection.close() }
        // Warm up, then measure from a settled baseline.
        for _ in 0..<10 { _ = try connection.request(["reload", "com.example.greeter"]) }
        let baseline = host.residentKiB
        for cycle in 0..<200 {
            let id = cycle % 2 == 0 ? "com.example.greeter" : "com.example.counter"
            let reply = try #require(try connection.request(["reload", id]))
            #expect(!reply.contains("error:"), "\(reply)")
        }
        let tree = try #require(try connection.request(["tree"]))
        #expect(tree.components(separatedBy: "tasks 1").count - 1 == 2, "one ticking task per open counter, no more:\n\(tree)")
        let status = try #require(try connection.request(["status"]))
        let growth = host.residentKiB - baseline
        if isolation == "in-process" {
            #expect(status.contains("retired Swift generations: 100"))
            let retiredKiB = 100 * (try FileManager.default.attributesOfItem(atPath: BuildProducts.library("libCounter.so"))[.size] as! Int) / 1024
            #expect(growth < retiredKiB + 64 * 1024, "resident growth \(growth) KiB against \(retiredKiB) KiB of retired images")
        } else {
            #expect(status.contains("retired Swift generations: 0"), "\(status)")
            #expect(status.contains("workers: com.example.counter pid"), "\(status)")
            #expect(growth < 16 * 1024, "resident growth \(growth) KiB over 200 isolated reloads")
        }
    }

    @Test("restart re-executes the host: same process id, persisted value and open screens kept")
    func restart() throws {
        let workspace = PluginWorkspace()
        workspace.stage("counter.json")
        let host = try RunningHost(workspace)
        try host.wait(for: "loaded      1")
        // One connection: `screen` numbers belong to the connection's shell.
        let connection = try ControlConnectionForTests(host.socket)
        _ = try connection.request(["open", "counter"])
        _ = try connection.request(["screen"])
        _ = try connection.request(["step", "1", "+"])
        #expect(try connection.request(["tap", "2"])?.contains("\"Total: 1\"") == true)
        connection.close()
        let pid = host.process.processIdentifier
        _ = try BerthProcess.run(["restart", "--socket", host.socket], in: workspace.root)
        let tree = try host.wait(for: "com.example.counter/counter", in: ["tree"])
        #expect(tree.contains("gen 1  active"))
        #expect(host.process.processIdentifier == pid && host.process.isRunning)
        #expect(host.log.contains("restored after restart: 1 plugin(s), 1 screen(s)"))
        #expect(try host.command(["screen"]).contains("\"Total: 1\""))
    }

    @Test("a restart whose plan cannot be written is refused, and the host runs on with its screens")
    func restartRefused() throws {
        let workspace = PluginWorkspace()
        workspace.stage("counter.json")
        let host = try RunningHost(workspace)
        try host.wait(for: "loaded      1")
        _ = try host.command(["open", "counter"])
        let status = try host.command(["status"])
        let runtime = try #require(status.split(separator: "\n").first { $0.hasPrefix("runtime folder: ") }?.dropFirst("runtime folder: ".count))
        // A folder where the plan file goes: it cannot be created.
        let planPath = (String(runtime) as NSString).deletingLastPathComponent + "/restart-\(host.process.processIdentifier).json"
        try FileManager.default.createDirectory(atPath: planPath, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: planPath) }
        let refused = try BerthProcess.run(["restart", "--socket", host.socket], in: workspace.root)
        #expect(refused.status != 0)
        #expect(refused.standardError.contains("restart refused: cannot write its plan to \(planPath)"), "\(refused.standardError)")
        #expect(host.process.isRunning)
        #expect(try host.command(["tree"]).contains("com.example.counter/counter"))
    }
}

@Suite("Control socket peer check", .blocking)
struct PeerCheckTests {
    @Test("the peer of a socket pair is this process's uid; any other expected uid is refused, naming both")
    func peerCheck() throws {
        var pair: [Int32] = [0, 0]
        #expect(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &pair) == 0)
        defer { close(pair[0]); close(pair[1]) }
        #expect(ControlServer.checkPeer(pair[0], expectedUID: getuid()) == nil)
        let refusal = try #require(ControlServer.checkPeer(pair[0], expectedUID: getuid() + 1))
        #expect(refusal == "refused: the client runs as uid \(getuid()), this host as uid \(getuid() + 1)")
    }
}

@Suite("Watching a folder whose plugin changes id", .blocking)
struct WatchedFolderIDTests {
    @Test("a watched folder switched to another id unloads the old plugin; removing the folder unloads the new one")
    func folderChangesID() throws {
        let workspace = PluginWorkspace()
        let folder = workspace.stage("counter.json", as: "shared")
        let host = try RunningHost(workspace)
        try host.wait(for: "com.example.counter  1.0.0    swift    loaded")
        // The same folder now holds Greeter: library first, then its manifest.
        try FileManager.default.copyItem(atPath: BuildProducts.library("libGreeter.so"), toPath: folder + "/libGreeter.so")
        let manifest = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: BuildProducts.manifest("greeter.json")))) as? [String: Any])
        workspace.write(manifest: manifest, in: folder)
        try FileManager.default.removeItem(atPath: folder + "/libCounter.so")
        let plugins = try host.wait(for: "com.example.greeter  1.2.0    c        loaded")
        #expect(!plugins.contains("com.example.counter"), "one folder holds one plugin:\n\(plugins)")
        try FileManager.default.removeItem(atPath: folder)
        var remaining = plugins
        try eventually(every: .milliseconds(100)) {
            remaining = try host.command(["plugins"])
            return !remaining.contains("com.example.greeter")
        }
        #expect(!remaining.contains("com.example.greeter"), "removing the folder unloads what came from it:\n\(remaining)")
    }
}
