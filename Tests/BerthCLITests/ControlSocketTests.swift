import Foundation
import Testing
import BerthTestSupport
@testable import BerthCLI
#if canImport(Glibc)
import Glibc
#endif

/// The control socket's rules, on real `berth run` processes, real sockets and real files:
/// what a host may remove at its path, what it refuses to start with, and that no client
/// can hold the host up.
@Suite("Control socket", .serialized, .blocking)
struct ControlSocketTests {
    /// What sits at a `--socket` path before the host starts.
    enum Occupant: String, CaseIterable, CustomTestStringConvertible {
        case regularFile = "a regular file"
        case symbolicLink = "a symbolic link"
        case folder = "a folder"

        var testDescription: String { rawValue }
    }

    private func script(_ workspace: PluginWorkspace, _ lines: String) throws -> String {
        let path = workspace.root + "/script.txt"
        try lines.write(toFile: path, atomically: false, encoding: .utf8)
        return path
    }

    private func fileType(_ path: String) -> mode_t? {
        var info = stat()
        return lstat(path, &info) == 0 ? info.st_mode & S_IFMT : nil
    }

    @Test("a --socket path holding something other than a socket: the host does not start, says so in one line, and leaves it alone", arguments: Occupant.allCases)
    func nonSocketPathIsRefused(_ occupant: Occupant) throws {
        let workspace = PluginWorkspace()
        let kept = workspace.root + "/important.txt"
        try "keep\n".write(toFile: kept, atomically: false, encoding: .utf8)
        let path: String
        switch occupant {
        case .regularFile:
            path = kept
        case .symbolicLink:
            path = workspace.root + "/link.sock"
            #expect(symlink(kept, path) == 0)
        case .folder:
            path = workspace.root + "/folder.sock"
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
            try "inside\n".write(toFile: path + "/inside.txt", atomically: false, encoding: .utf8)
        }
        let typeBefore = fileType(path)
        let run = try BerthProcess.run(
            ["run", "--plugins", "plugins", "--state-dir", "state", "--script", try script(workspace, "status\n"), "--socket", path],
            in: workspace.root
        )
        #expect(run.status == 1)
        #expect(run.standardError == "error: \(path) exists and is \(occupant.rawValue), not a socket; refusing to replace it (remove it or pass another --socket PATH)\n")
        #expect(!run.standardOutput.contains("control socket:"), "the host did not listen")
        #expect(fileType(path) == typeBefore, "still \(occupant.rawValue)")
        #expect(try String(contentsOfFile: kept, encoding: .utf8) == "keep\n")
        if occupant == .folder {
            #expect(try String(contentsOfFile: path + "/inside.txt", encoding: .utf8) == "inside\n")
        }
    }

    @Test("a --socket path over 107 bytes: one error line and exit 1, from the host and from a client")
    func overlongPathFails() throws {
        let workspace = PluginWorkspace()
        let path = workspace.root + "/" + String(repeating: "s", count: 120) + ".sock"
        let message = "error: the socket path \(path) is \(path.utf8.count) bytes long; a Unix socket path can be at most 107 bytes\n"
        let run = try BerthProcess.run(
            ["run", "--plugins", "plugins", "--state-dir", "state", "--script", try script(workspace, "status\n"), "--socket", path],
            in: workspace.root
        )
        #expect(run.status == 1)
        #expect(run.standardError == message)
        let client = try BerthProcess.run(["status", "--socket", path], in: workspace.root)
        #expect(client.status == 1)
        #expect(client.standardError == message)
    }

    @Test("a stale socket left by a host that died is replaced")
    func staleSocketIsReplaced() throws {
        let workspace = PluginWorkspace()
        // A socket file nobody listens on: bound, then closed without removing it.
        let path = workspace.root + "/control.sock"
        let stale = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        var address = try ControlClient.address(path)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(stale, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        #expect(bound == 0)
        close(stale)
        #expect(ControlServer.identity(ofSocketAt: path) != nil)
        let host = try RunningHost(workspace)
        // Answers at the path (the stale socket could only refuse the connection).
        try host.wait(for: "runtime folder", in: ["status"])
        #expect(host.log.contains("  · control socket: \(path)"))
        #expect(!host.log.contains("error:"))
    }

    @Test("a second host at a live host's path runs without a socket and leaves the first host's socket in place")
    func liveSocketIsKept() throws {
        let workspace = PluginWorkspace()
        let first = try RunningHost(workspace)
        try first.wait(for: "runtime folder", in: ["status"])
        let identity = try #require(ControlServer.identity(ofSocketAt: first.socket))
        let second = try BerthProcess.run(
            ["run", "--plugins", "plugins", "--state-dir", "state2", "--script", try script(workspace, "status\n"), "--socket", first.socket],
            in: workspace.root
        )
        #expect(second.standardError.contains("error: another host is listening at \(first.socket); stop it or pass --socket PATH"))
        #expect(ControlServer.identity(ofSocketAt: first.socket) == identity)
        #expect(try first.command(["status"]).contains("runtime folder"))
    }

    @Test("a host whose socket path was replaced while it ran leaves the new file alone when it quits")
    func replacedPathIsKeptAtQuit() throws {
        let workspace = PluginWorkspace()
        let host = try RunningHost(workspace)
        try host.wait(for: "runtime folder", in: ["status"])
        // Connected before the path changes hands: the only way left to reach this host.
        let connection = try ControlConnectionForTests(host.socket)
        defer { connection.close() }
        let replacement = workspace.root + "/replacement.txt"
        try "keep\n".write(toFile: replacement, atomically: false, encoding: .utf8)
        #expect(rename(replacement, host.socket) == 0)
        _ = try? connection.request(["quit"])
        // A deadline: it ends its waiting worker first (a PID namespace's teardown is slow on a
        // loaded machine; the fresh-clone CI of 5f3464c saw more than 10 s).
        eventually(timeout: .seconds(120)) { !host.process.isRunning }
        try #require(!host.process.isRunning, "the host quit")
        #expect(fileType(host.socket) == S_IFREG)
        #expect(try String(contentsOfFile: host.socket, encoding: .utf8) == "keep\n")
    }

    @Test("a follower that never reads is dropped with a final 'dropped: too slow' line; the host keeps answering everyone else")
    func slowFollowerIsDropped() throws {
        let workspace = PluginWorkspace()
        workspace.stage("greeter.json")
        let host = try RunningHost(workspace, arguments: ["--debounce-ms", "60000"])  // only the reloads below make events
        try host.wait(for: "loaded      1")
        let follower = try ControlConnectionForTests(host.socket)
        defer { follower.close() }
        follower.sendFrame(Array(#"{"args": ["events", "--follow"]}"#.utf8))
        // From here the follower reads nothing until the host has dropped it.
        let driver = try ControlConnectionForTests(host.socket)
        defer { driver.close() }
        // A reload makes four events, about 560 bytes of frames: the kernel's socket buffer
        // and the 256 KiB queue are full after some 600 reloads, a second or two. The
        // deadline only keeps a host that waits for the follower (as one did, 2 s for each
        // event) from holding the test for hours; nothing here measures speed.
        var reloads = 0
        try eventually(timeout: .seconds(300), every: .zero) {
            for _ in 0..<100 {
                let reply = try #require(try driver.request(["reload", "com.example.greeter"]), "reload \(reloads + 1) answered")
                try #require(reply.contains("com.example.greeter: generation"), "\(reply)")
                reloads += 1
            }
            return host.log.contains("dropped: too slow") || reloads >= 10_000
        }
        #expect(host.log.contains("  · control socket: an events --follow client was dropped: too slow (more than 256 KiB behind)"))
        #expect(try host.command(["status"]).contains("loaded: 1 plugin(s)"), "another client is answered")
        // What the follower was sent: whole frames of events in order, then the notice, then the end.
        var frames: [String] = []
        while let frame = try follower.readReply() { frames.append(frame) }
        let notice = try #require(frames.last)
        #expect(notice == "error: dropped: too slow (the client fell more than 256 KiB of events behind)")
        let sequence = frames.dropLast().map { Int($0.prefix { $0.isNumber }) ?? -1 }
        #expect(sequence.count > 1)
        #expect(sequence.first == 1, "the history from the first event")
        #expect(zip(sequence, sequence.dropFirst()).allSatisfy { $0 < $1 }, "in order, none repeated")
        #expect(sequence.last ?? 0 < reloads * 4, "dropped long before the last event")
    }

    @Test("a follower that starts late gets the whole history, even one longer than the limit for falling behind")
    func lateFollowerGetsHistory() throws {
        let workspace = PluginWorkspace()
        workspace.stage("greeter.json")
        let host = try RunningHost(workspace, arguments: ["--debounce-ms", "60000"])
        try host.wait(for: "loaded      1")
        let driver = try ControlConnectionForTests(host.socket)
        defer { driver.close() }
        for _ in 0..<1_000 { _ = try #require(try driver.request(["reload", "com.example.greeter"])) }
        let history = try #require(try driver.request(["events"])).split(separator: "\n")
        let historyBytes = history.reduce(0) { $0 + $1.utf8.count }
        #expect(historyBytes > ControlConnection.followerLimit, "the history (\(historyBytes) bytes) is longer than the limit")
        let last = try #require(history.last.map { String($0.prefix { $0.isNumber }) })
        let follower = try ControlConnectionForTests(host.socket)
        defer { follower.close() }
        follower.sendFrame(Array(#"{"args": ["events", "--follow"]}"#.utf8))
        var received: [String] = []
        while let frame = try follower.readReply() {
            received.append(frame)
            if frame.hasPrefix(last + ".") || frame.hasPrefix("error:") { break }
        }
        #expect(received.count == history.count)
        #expect(received.last?.hasPrefix(last + ".") == true, "\(received.last ?? "nothing")")
        #expect(!host.log.contains("dropped: too slow"))
    }

    @Test("a refusal written before the request reaches a client whose request can no longer be written")
    func refusalReachesClient() throws {
        var pair: [Int32] = [0, 0]
        #expect(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &pair) == 0)
        defer { close(pair[1]) }
        // The host's side refuses and hangs up at once, without reading the request.
        let server = ControlConnection(descriptor: pair[0])
        #expect(server.reply(ControlReply(ok: false, errors: ["refused: the client runs as uid 65534, this host as uid 0"])) == .written)
        server.finish(drainFor: 0)
        let reply = try ControlClient.exchange(["status"], on: pair[1], host: "the test's socket pair")
        #expect(reply.ok == false)
        #expect(reply.errors == ["refused: the client runs as uid 65534, this host as uid 0"])
    }

    /// A host leaves (re-executes itself, or exits) only after the socket commands it
    /// received have their replies written. `BERTH_TEST_CONTROL_REPLY_DELAY_MS` holds each
    /// reply back a second, so a host that stopped its server and left at once, as soon as
    /// its loop ended, would close these connections unanswered every time.
    @Test("restart and quit sent over the socket are answered before the host leaves, in both modes", arguments: ["process", "in-process"])
    func leavingCommandsAreAnswered(_ isolation: String) throws {
        let workspace = PluginWorkspace()
        workspace.stage("counter.json")
        let host = try RunningHost(workspace, arguments: ["--isolation", isolation], environment: ["BERTH_TEST_CONTROL_REPLY_DELAY_MS": "1000"])
        try host.wait(for: "loaded      1")
        let pid = host.process.processIdentifier

        let restart = try ControlConnectionForTests(host.socket)
        let restarted = try restart.request(["restart"])
        restart.close()
        #expect(restarted == "restarting the host (persisted state and open screens are kept)", "host log:\n\(host.log)")
        #expect(eventually(timeout: .seconds(60), every: .milliseconds(20)) { host.log.contains("restored after restart: 1 plugin(s), 0 screen(s)") },
                "host log:\n\(host.log)")
        try host.wait(for: "loaded      1")

        let quit = try ControlConnectionForTests(host.socket)
        let quitReply = try quit.request(["quit"])
        quit.close()
        #expect(quitReply == "", "quit is answered (an empty reply), not closed unanswered; host log:\n\(host.log)")
        host.process.waitUntilExit()
        #expect(host.process.terminationStatus == 0)
        #expect(host.process.processIdentifier == pid, "the same process restarted, then quit")
    }
}

/// The control-frame fuzz harness's inputs, replayed in the normal suite (Docs/fuzzing.md).
@Suite("Control frame fuzz corpus replay", .blocking)
struct ControlFrameCorpusTests {
    @Test("control-frame inputs decode into requests, stopping at the first broken frame")
    func frames() throws {
        let inputs = FuzzCorpus.inputs("control-frame")
        #expect(inputs.count >= 5)
        for (_, bytes) in inputs { _ = ControlByteStream.requests(in: bytes) }
        #expect(ControlByteStream.requests(in: try #require(inputs["corpus/two-requests"])).map { $0?.args ?? [] }
            == [["reload", "com.example.counter", "--keep-state"], ["events", "--follow"]])
        #expect(ControlByteStream.requests(in: try #require(inputs["corpus/empty-args"])).map { $0 == nil } == [true, true])
        #expect(ControlByteStream.requests(in: try #require(inputs["corpus/over-limit"])).isEmpty)
        #expect(ControlByteStream.requests(in: try #require(inputs["corpus/cut-short"])).isEmpty)
    }
}
