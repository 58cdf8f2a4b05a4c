import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A running `berth test-host`: requests go to its stdin, one JSON line each, and each
/// reply is one JSON line on its stdout. Its stderr (the host's and the plugin's log lines)
/// goes to a file, kept for `log` and for error messages.
final class TestHostProcess: @unchecked Sendable {
    private let process = Process()
    private let input = Pipe()
    private let output = Pipe()
    private let logPath: String
    private let package: String
    private var buffered: [UInt8] = []

    /// Starts `berth test-host` over `package`'s `library`.
    init(berth: String, worker: String, package: String, library: String, isolation: PluginIsolation, width: Int, height: Int) throws(BerthTestingError) {
        self.package = package
        logPath = (NSTemporaryDirectory() as NSString).appendingPathComponent("berth-testing-\(UUID().uuidString.prefix(8)).log")
        _ = FileManager.default.createFile(atPath: logPath, contents: nil)
        process.executableURL = URL(fileURLWithPath: berth)
        process.arguments = ["test-host", package, "--library", library, "--isolation", isolation.rawValue,
                             "--width", String(width), "--height", String(height)]
        var environment = ProcessInfo.processInfo.environment
        environment["BERTH_WORKER"] = worker
        // A crash of the plugin in the host's process ends the host: the Swift runtime's
        // backtrace, printed at once and without colour, is where its line is found.
        if environment["SWIFT_BACKTRACE"] == nil { environment["SWIFT_BACKTRACE"] = "enable=yes,interactive=no,color=no" }
        process.environment = environment
        process.standardInput = input
        process.standardOutput = output
        process.standardError = FileHandle(forWritingAtPath: logPath)
        do {
            try process.run()
        } catch {
            throw BerthTestingError("\(berth): cannot start it: \(error)")
        }
    }

    deinit {
        try? input.fileHandleForWriting.close()
        if process.isRunning {
            // End of input ends the host; a host stuck in a plugin is killed.
            let deadline = Date().addingTimeInterval(5)
            while process.isRunning && Date() < deadline { usleep(10_000) }
            if process.isRunning { process.terminate() }
        }
        try? FileManager.default.removeItem(atPath: logPath)
    }

    /// What the host and the plugin logged so far.
    var log: String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }

    /// Sends `request` (nil: only reads, for the first frame) and reads the reply line.
    func exchange(_ request: [String: Any]?, within seconds: Double) throws(BerthTestingError) -> [String: Any] {
        let what = request.map { ($0["op"] as? String) ?? "?" } ?? "start"
        if let request {
            guard let data = try? JSONSerialization.data(withJSONObject: request) else { throw BerthTestingError("cannot encode the request \(request)") }
            do {
                try input.fileHandleForWriting.write(contentsOf: data + Data("\n".utf8))
            } catch {
                throw ended(during: what)
            }
        }
        let line = try readLine(within: seconds, during: what)
        guard let reply = (try? JSONSerialization.jsonObject(with: Data(line))) as? [String: Any] else {
            throw BerthTestingError("berth test-host answered '\(what)' with something not JSON: \(String(decoding: line, as: UTF8.self))")
        }
        return reply
    }

    private func readLine(within seconds: Double, during what: String) throws(BerthTestingError) -> [UInt8] {
        let descriptor = output.fileHandleForReading.fileDescriptor
        let deadline = Date().addingTimeInterval(seconds)
        while true {
            if let newline = buffered.firstIndex(of: UInt8(ascii: "\n")) {
                let line = Array(buffered[..<newline])
                buffered.removeSubrange(...newline)
                return line
            }
            let left = deadline.timeIntervalSinceNow
            guard left > 0 else {
                process.terminate()
                throw BerthTestingError("berth test-host did not answer '\(what)' within \(Int(seconds)) s (stopped it); its log: \(Self.tellingLines(of: log))")
            }
            var poll = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            guard Glibc.poll(&poll, 1, Int32(min(left, 1) * 1000)) >= 0 else { continue }
            guard poll.revents != 0 else { continue }
            var chunk = [UInt8](repeating: 0, count: 65_536)
            let count = chunk.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { throw ended(during: what) }
            buffered += chunk[..<count]
        }
    }

    private func ended(during what: String) -> BerthTestingError {
        process.waitUntilExit()
        let log = log
        let located = Self.authorFrame(in: log, package: package).map { ", at \($0)" } ?? ""
        return BerthTestingError("berth test-host ended during '\(what)' (exit \(process.terminationStatus))\(located): \(Self.tellingLines(of: log))")
    }

    /// The first frame of the package's own code in a crash's backtrace, as `file:line in
    /// function` with the file relative to the package: the backtracer prints
    /// `3 [ra] 0x… WaveView.body.getter + 32 in libHello.so at /…/Sources/Hello/Hello.swift:14:35`,
    /// and the frames above it are the standard library's and the SDK's.
    static func authorFrame(in log: String, package: String) -> String? {
        let root = package.hasSuffix("/") ? package : package + "/"
        for line in log.split(separator: "\n") {
            guard let at = line.range(of: " at " + root, options: .backwards), let plus = line.range(of: " + ") else { continue }
            let location = line[at.upperBound...]
            guard !location.hasPrefix(".build/"), let colon = location.lastIndex(of: ":") else { continue }
            // `0x… FUNCTION + offset in IMAGE`: the function is between the address and " + ".
            let head = line[..<plus.lowerBound].split(separator: " ", omittingEmptySubsequences: true)
            guard let address = head.firstIndex(where: { $0.hasPrefix("0x") }) else { continue }
            let function = head[(address + 1)...].joined(separator: " ")
            return "\(location[..<colon]) in \(function)"
        }
        return nil
    }

    /// The log's lines that say what went wrong (a fatal error, a crash, an error), else its
    /// last lines: a crash's backtrace ends with a list of images, which says nothing.
    private static func tellingLines(of log: String) -> String {
        let lines = log.split(separator: "\n")
        let telling = lines.filter { line in ["Fatal error", "crashed", "error"].contains { line.contains($0) } }
        let shown = telling.isEmpty ? Array(lines.suffix(5)) : Array(telling.prefix(4))
        return shown.isEmpty ? "(nothing logged)" : shown.joined(separator: " | ") + " (all of it: `log`)"
    }
}
