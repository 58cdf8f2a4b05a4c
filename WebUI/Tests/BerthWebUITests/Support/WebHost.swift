import Foundation
import Synchronization
import Testing

/// `berth-web run --web` (what `berth run --web` executes) over a workspace's plugins, on a
/// port the system picks; `url` is the URL it printed, with its token.
final class WebHost: @unchecked Sendable {
    let process = Process()
    let url: String
    /// The port and token taken from `url`.
    let port: Int
    let token: String
    private let output = OutputBuffer()

    /// Starts the host; `arguments` come after `run --web --port 0` (`--isolation`, `--watch` …).
    init(workspace: Workspace, isolation: String, arguments: [String] = [], command: [String]? = nil, in folder: String? = nil,
         executable: String? = nil, environment extra: [String: String] = [:]) throws {
        process.executableURL = URL(fileURLWithPath: try executable ?? Paths.berthWeb())
        process.arguments = (command ?? ["run", "--web", "--port", "0", "--plugins", workspace.plugins, "--no-socket"])
            + ["--isolation", isolation, "--state-dir", workspace.root + "/state"] + arguments
        process.currentDirectoryURL = URL(fileURLWithPath: folder ?? workspace.root)
        var environment = ProcessInfo.processInfo.environment
        environment["BERTH_WORKER"] = try Paths.rootProduct("berth-worker")
        environment["NO_COLOR"] = "1"
        environment.merge(extra) { _, new in new }
        process.environment = environment
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        process.standardInput = FileHandle.nullDevice
        let output = self.output
        pipe.fileHandleForReading.readabilityHandler = { handle in
            let data = handle.availableData
            if !data.isEmpty { output.text.withLock { $0 += String(decoding: data, as: UTF8.self) } }
        }
        try process.run()
        var found: String?
        let deadline = ContinuousClock.now + .seconds(900)
        while found == nil, ContinuousClock.now < deadline, process.isRunning {
            Thread.sleep(forTimeInterval: 0.05)
            found = output.text.withLock { text in
                text.split(separator: "\n").first { $0.hasPrefix("berth web: open ") }.map { String($0.dropFirst("berth web: open ".count)) }
            }
        }
        guard let found, let components = URLComponents(string: found), let port = components.port,
              let token = components.queryItems?.first(where: { $0.name == "token" })?.value
        else {
            if process.isRunning { process.terminate() }
            throw WebHostError(line: "berth-web printed no URL: \(output.text.withLock { $0 })")
        }
        url = found
        self.port = port
        self.token = token
    }

    /// What the host printed so far.
    var printed: String { output.text.withLock { $0 } }

    /// Waits until the host printed something `predicate` accepts.
    func waitForOutput(timeout: Duration, _ predicate: (String) -> Bool) -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if predicate(printed) { return true }
            Thread.sleep(forTimeInterval: 0.1)
        }
        return predicate(printed)
    }

    /// SIGINT, as Ctrl-C; returns the exit status.
    @discardableResult
    func stop() -> Int32 {
        if process.isRunning {
            kill(process.processIdentifier, SIGINT)
            let deadline = ContinuousClock.now + .seconds(30)
            while process.isRunning, ContinuousClock.now < deadline { Thread.sleep(forTimeInterval: 0.05) }
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            process.waitUntilExit()
        }
        return process.terminationStatus
    }

    deinit {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    }
}

/// What a child process printed, shared with its pipe's reader.
final class OutputBuffer: Sendable {
    let text = Mutex<String>("")
}

struct WebHostError: Error, CustomStringConvertible {
    var line: String
    var description: String { line }
}

/// One HTTP request written by hand on a TCP socket to 127.0.0.1, so a test chooses every
/// header (`Host`, `Origin`, the WebSocket upgrade's); returns the status line and headers.
enum RawHTTP {
    static func request(port: Int, _ text: String) throws -> String {
        String(decoding: try exchange(port: port, Array(text.replacingOccurrences(of: "\n", with: "\r\n").utf8), untilHeaders: true), as: UTF8.self)
    }

    /// A request with a body, read to the end of the answer (`Connection: close`); returns
    /// the answer's body. (Foundation's URLSession fails here with "Failed writing header".)
    static func exchange(port: Int, method: String, path: String, body: Data?) throws -> Data {
        var head = "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\n"
        if let body { head += "Content-Type: application/json\r\nContent-Length: \(body.count)\r\n" }
        let answer = try exchange(port: port, Array((head + "\r\n").utf8) + Array(body ?? Data()), untilHeaders: false)
        guard let end = answer.firstRange(of: Array("\r\n\r\n".utf8)) else { throw WebHostError(line: "\(method) \(path): no answer") }
        let headers = String(decoding: answer[..<end.lowerBound], as: UTF8.self).lowercased()
        var payload = Array(answer[end.upperBound...])
        if headers.contains("transfer-encoding: chunked") {
            var joined: [UInt8] = []
            var rest = payload[...]
            while let line = rest.firstRange(of: Array("\r\n".utf8)), let size = Int(String(decoding: rest[..<line.lowerBound], as: UTF8.self), radix: 16), size > 0 {
                let start = line.upperBound
                joined += rest[start..<start + size]
                rest = rest[(start + size + 2)...]
            }
            payload = joined
        }
        return Data(payload)
    }

    private static func exchange(port: Int, _ bytes: [UInt8], untilHeaders: Bool) throws -> [UInt8] {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { throw WebHostError(line: "socket: \(String(cString: strerror(errno)))") }
        defer { close(socket) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { throw WebHostError(line: "connect to 127.0.0.1:\(port): \(String(cString: strerror(errno)))") }
        var timeout = timeval(tv_sec: 120, tv_usec: 0)
        setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var sent = 0
        while sent < bytes.count {
            let count = bytes[sent...].withUnsafeBytes { send(socket, $0.baseAddress, $0.count, 0) }
            if count <= 0 { throw WebHostError(line: "send to 127.0.0.1:\(port): \(String(cString: strerror(errno)))") }
            sent += count
        }
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while !isComplete(received, untilHeaders: untilHeaders) {
            let count = recv(socket, &buffer, buffer.count, 0)
            if count <= 0 { break }
            received += buffer[0..<count]
        }
        return received
    }

    /// Whether `received` holds the whole answer: its headers (`untilHeaders`), else its
    /// headers and `Content-Length` bytes of body (a server may keep the connection open).
    private static func isComplete(_ received: [UInt8], untilHeaders: Bool) -> Bool {
        guard let end = received.firstRange(of: Array("\r\n\r\n".utf8)) else { return false }
        if untilHeaders { return true }
        let headers = String(decoding: received[..<end.lowerBound], as: UTF8.self).lowercased()
        guard let line = headers.split(separator: "\r\n").first(where: { $0.hasPrefix("content-length:") }),
              let length = Int(line.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces))
        else { return false }
        return received.count - end.upperBound >= length
    }
}
