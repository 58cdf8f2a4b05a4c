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
    private let output = Mutex<String>("")

    /// Starts the host; `arguments` come after `run --web --port 0` (`--isolation`, `--watch` …).
    init(workspace: Workspace, isolation: String, arguments: [String] = [], command: [String]? = nil, in folder: String? = nil) throws {
        process.executableURL = URL(fileURLWithPath: try Paths.berthWeb())
        process.arguments = (command ?? ["run", "--web", "--port", "0", "--plugins", workspace.plugins, "--no-socket"])
            + ["--isolation", isolation, "--state-dir", workspace.root + "/state"] + arguments
        process.currentDirectoryURL = URL(fileURLWithPath: folder ?? workspace.root)
        var environment = ProcessInfo.processInfo.environment
        environment["BERTH_WORKER"] = try Paths.rootProduct("berth-worker")
        environment["NO_COLOR"] = "1"
        process.environment = environment
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        process.standardInput = FileHandle.nullDevice
        let output = self.output
        pipe.fileHandleForReading.readabilityHandler = { handle in
            let data = handle.availableData
            if !data.isEmpty { output.withLock { $0 += String(decoding: data, as: UTF8.self) } }
        }
        try process.run()
        var found: String?
        let deadline = ContinuousClock.now + .seconds(900)
        while found == nil, ContinuousClock.now < deadline, process.isRunning {
            Thread.sleep(forTimeInterval: 0.05)
            found = output.withLock { text in
                text.split(separator: "\n").first { $0.hasPrefix("berth web: open ") }.map { String($0.dropFirst("berth web: open ".count)) }
            }
        }
        guard let found, let components = URLComponents(string: found), let port = components.port,
              let token = components.queryItems?.first(where: { $0.name == "token" })?.value
        else {
            if process.isRunning { process.terminate() }
            throw WebHostError(line: "berth-web printed no URL: \(output.withLock { $0 })")
        }
        url = found
        self.port = port
        self.token = token
    }

    /// What the host printed so far.
    var printed: String { output.withLock { $0 } }

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

struct WebHostError: Error, CustomStringConvertible {
    var line: String
    var description: String { line }
}

/// One HTTP request written by hand on a TCP socket to 127.0.0.1, so a test chooses every
/// header (`Host`, `Origin`, the WebSocket upgrade's); returns the status line and headers.
enum RawHTTP {
    static func request(port: Int, _ text: String) throws -> String {
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
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        let bytes = Array(text.replacingOccurrences(of: "\n", with: "\r\n").utf8)
        _ = bytes.withUnsafeBytes { send(socket, $0.baseAddress, $0.count, 0) }
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while !String(decoding: received, as: UTF8.self).contains("\r\n\r\n") {
            let count = recv(socket, &buffer, buffer.count, 0)
            if count <= 0 { break }
            received += buffer[0..<count]
        }
        return String(decoding: received, as: UTF8.self)
    }
}
