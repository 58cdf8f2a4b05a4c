import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A real `berth run --watch` process on a workspace, with its control socket, for the
/// hot-reload tests. Stopped (with `quit`, else SIGTERM) when released.
public final class RunningHost {
    public let workspace: PluginWorkspace
    public let socket: String
    public let process = Process()
    private let input = Pipe()
    private let outputFile: String

    /// `environment` is added to this process's own for the host.
    public init(_ workspace: PluginWorkspace, arguments: [String] = [], environment: [String: String] = [:]) throws {
        self.workspace = workspace
        socket = workspace.root + "/control.sock"
        outputFile = workspace.root + "/host.log"
        _ = FileManager.default.createFile(atPath: outputFile, contents: nil)
        let log = FileHandle(forWritingAtPath: outputFile)!
        process.executableURL = URL(fileURLWithPath: BuildProducts.berth)
        process.arguments = ["run", "--plugins", "plugins", "--watch", "--socket", socket, "--state-dir", "state", "--debounce-ms", "100"] + arguments
        process.currentDirectoryURL = URL(fileURLWithPath: workspace.root)
        if !environment.isEmpty { process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 } }
        process.standardInput = input
        process.standardOutput = log
        process.standardError = log
        try process.run()
        // Ready once it announced its socket: that line comes after the first discovery and
        // after the watch is armed (the socket file itself can appear before both).
        // A deadline, not a timing (a fresh-clone CI at load 35 saw more than 10 s).
        eventually(timeout: .seconds(120), every: .milliseconds(20)) { FileManager.default.fileExists(atPath: socket) && self.log.contains("control socket: ") }
        guard FileManager.default.fileExists(atPath: socket) else { throw RunningHostError("the host did not open \(socket): \(self.log)") }
    }

    deinit {
        if process.isRunning {
            _ = try? command(["quit"])
            eventually(timeout: .seconds(2), every: .milliseconds(20)) { !process.isRunning }
            if process.isRunning { process.terminate() }
        }
        try? input.fileHandleForWriting.close()
    }

    /// Everything the host printed so far (stdout and stderr).
    public var log: String { (try? String(contentsOfFile: outputFile, encoding: .utf8)) ?? "" }

    /// Sends one host command over the socket and returns the reply's text (output, then
    /// errors prefixed `error: `).
    public func command(_ args: [String]) throws -> String {
        let connection = try ControlConnectionForTests(socket)
        defer { connection.close() }
        guard let reply = try connection.request(args) else { throw RunningHostError("no reply to \(args)") }
        return reply
    }

    /// Polls `args` until its reply contains `text` (or the deadline passes). Runs of spaces
    /// count as one, so table column widths do not matter.
    @discardableResult
    public func wait(for text: String, in args: [String] = ["plugins"], timeout: Double = 120) throws -> String {
        var last = ""
        let shown = eventually(timeout: .milliseconds(Int(timeout * 1_000)), every: .milliseconds(50)) {
            last = (try? command(args)) ?? ""
            return Self.squeezed(last).contains(Self.squeezed(text))
        }
        if shown { return last }
        throw RunningHostError("timed out waiting for '\(text)' in \(args); last reply:\n\(last)\nhost log:\n\(log)")
    }

    /// `text` with every run of spaces made one space.
    public static func squeezed(_ text: String) -> String {
        text.split(separator: " ", omittingEmptySubsequences: true).joined(separator: " ")
    }

    /// The host's resident memory in KiB (from /proc).
    public var residentKiB: Int {
        let status = (try? String(contentsOfFile: "/proc/\(process.processIdentifier)/status", encoding: .utf8)) ?? ""
        let line = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") } ?? ""
        return Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0
    }
}

public struct RunningHostError: Error, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}

/// A raw control-socket client: frames are a 4-byte big-endian length and UTF-8 JSON.
public final class ControlConnectionForTests {
    public let descriptor: Int32

    /// Connects to `path`; with `presentingToken`, sends the host's secret first, as every
    /// client of the host does (ControlServer), when the file beside the socket has one.
    public init(_ path: String, presentingToken: Bool = true) throws {
        descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        var address = Self.address(path)
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard result == 0 else {
            close()
            throw RunningHostError("connect \(path): \(String(cString: strerror(errno)))")
        }
        // A bound for a host that never answers, not a timing: a first action in a fresh
        // worker on a loaded CI machine has taken past 20 s (DevLoopTests' `tap 1`).
        var timeout = timeval(tv_sec: 90, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        if presentingToken, let token = try? String(contentsOfFile: path + ".token", encoding: .utf8) {
            sendFrame(Array(#"{"token":"\#(token)"}"#.utf8))
        }
    }

    /// A Unix socket address for `path`.
    public static func address(_ path: String) -> sockaddr_un {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { buffer in
            let bytes = Array(path.utf8)
            buffer.copyBytes(from: bytes)
            buffer[bytes.count] = 0
        }
        return address
    }

    public func close() { Glibc.close(descriptor) }

    /// Sends raw bytes (garbage tests).
    public func sendRaw(_ bytes: [UInt8]) {
        _ = bytes.withUnsafeBytes { send(descriptor, $0.baseAddress, bytes.count, Int32(MSG_NOSIGNAL)) }
    }

    public func sendFrame(_ payload: [UInt8]) {
        sendRaw(withUnsafeBytes(of: UInt32(payload.count).bigEndian, Array.init) + payload)
    }

    /// One reply frame decoded to text, or nil when the host closed the connection.
    public func readReply() throws -> String? {
        guard let header = readExactly(4) else { return nil }
        let length = header.reduce(0) { Int($0) << 8 | Int($1) }
        guard let body = readExactly(length),
              let object = try JSONSerialization.jsonObject(with: Data(body)) as? [String: Any]
        else { return nil }
        let output = (object["output"] as? [String] ?? []).joined(separator: "\n")
        let errors = (object["errors"] as? [String] ?? []).map { "error: \($0)" }.joined(separator: "\n")
        let event = object["event"] as? String
        return [output, errors, event ?? ""].filter { !$0.isEmpty }.joined(separator: "\n")
    }

    public func request(_ args: [String]) throws -> String? {
        sendFrame(Array(try JSONSerialization.data(withJSONObject: ["args": args])))
        return try readReply()
    }

    private func readExactly(_ count: Int) -> [UInt8]? {
        var bytes = [UInt8](repeating: 0, count: count)
        var received = 0
        while received < count {
            let result = bytes.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress! + received, count - received, 0) }
            guard result > 0 else { return nil }
            received += result
        }
        return bytes
    }
}
