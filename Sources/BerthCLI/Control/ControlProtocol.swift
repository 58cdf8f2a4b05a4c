import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The control socket's protocol: each message is a frame, a 4-byte big-endian length
/// then that many bytes of UTF-8 JSON. A client first sends `{"token": "…"}`, the secret
/// the host wrote beside its socket (`tokenPath`), then one request at a time, reading its
/// reply before sending the next; `events --follow` replies with one frame per event until
/// the client closes.
enum ControlProtocol {
    /// Frames larger than this are malformed (1 MiB).
    static let maximumFrame = 1 << 20

    /// `$XDG_RUNTIME_DIR/berth/control.sock`, else `/tmp/berth-<uid>/control.sock`.
    static func defaultSocketPath() -> String {
        if let runtime = ProcessInfo.processInfo.environment["XDG_RUNTIME_DIR"], !runtime.isEmpty {
            return runtime + "/berth/control.sock"
        }
        return "/tmp/berth-\(getuid())/control.sock"
    }

    /// The file holding the host's secret for the socket at `socketPath` (mode 0600): only
    /// a process that can read it commands the host. A worker's sandbox cannot.
    static func tokenPath(forSocket socketPath: String) -> String {
        socketPath + ".token"
    }

    /// Writes one frame; false when the peer is gone.
    static func writeFrame(_ payload: [UInt8], to descriptor: Int32) -> Bool {
        let length = UInt32(payload.count).bigEndian
        let frame = withUnsafeBytes(of: length, Array.init) + payload
        var sent = 0
        while sent < frame.count {
            let result = frame.withUnsafeBytes { send(descriptor, $0.baseAddress! + sent, frame.count - sent, Int32(MSG_NOSIGNAL)) }
            if result < 0 && errno == EINTR { continue }
            guard result > 0 else { return false }
            sent += result
        }
        return true
    }

    /// Reads one frame: nil at a clean end (the peer closed between frames); throws for a
    /// frame that is too large or cut short.
    static func readFrame(from descriptor: Int32) throws(ControlError) -> [UInt8]? {
        try readFrame { count, allowEnd throws(ControlError) in try readExactly(count, from: descriptor, allowEnd: allowEnd) }
    }

    /// The frame rules on any byte source: `read(count, allowEnd)` returns exactly `count`
    /// bytes, nil at a clean end when `allowEnd`, or throws. The socket is one source; the
    /// fuzzer's bytes (`ControlByteStream`) are another.
    static func readFrame(_ read: (Int, Bool) throws(ControlError) -> [UInt8]?) throws(ControlError) -> [UInt8]? {
        guard let header = try read(4, true) else { return nil }
        let length = header.reduce(0) { Int($0) << 8 | Int($1) }
        guard length <= maximumFrame else { throw ControlError("malformed request: a frame of \(length) bytes is over the \(maximumFrame)-byte limit") }
        return try read(length, false) ?? []
    }

    private static func readExactly(_ count: Int, from descriptor: Int32, allowEnd: Bool) throws(ControlError) -> [UInt8]? {
        var bytes = [UInt8](repeating: 0, count: count)
        var received = 0
        while received < count {
            let result = bytes.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress! + received, count - received, 0) }
            if result < 0 && errno == EINTR { continue }
            if result == 0 && received == 0 && allowEnd { return nil }
            guard result > 0 else { throw ControlError("malformed request: the frame ended after \(received) of \(count) bytes") }
            received += result
        }
        return bytes
    }

    static func encode<T: Encodable>(_ value: T) -> [UInt8] {
        (try? Array(JSONEncoder().encode(value))) ?? []
    }
}

/// The first frame of a connection: the secret read from `ControlProtocol.tokenPath`.
struct ControlHello: Codable {
    var token: String
}

/// A request: the host command's words (`["reload", "com.example.counter", "--keep-state"]`).
struct ControlRequest: Codable {
    var args: [String]

    init(args: [String]) { self.args = args }

    /// Decodes a request frame; nil for anything but a JSON object with a non-empty `args`.
    init?(frame: [UInt8]) {
        guard let request = try? JSONDecoder().decode(ControlRequest.self, from: Data(frame)), !request.args.isEmpty else { return nil }
        self = request
    }
}

/// Bytes in memory read as a socket would deliver them (the fuzz harness and its tests).
struct ControlByteStream {
    private let bytes: [UInt8]
    private var offset = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    /// Every frame in the stream decoded as a request, until the stream ends or breaks a rule.
    static func requests(in bytes: [UInt8]) -> [ControlRequest?] {
        var stream = ControlByteStream(bytes)
        var requests: [ControlRequest?] = []
        while let frame = try? ControlProtocol.readFrame({ count, allowEnd throws(ControlError) in try stream.read(count, allowEnd: allowEnd) }) {
            requests.append(ControlRequest(frame: frame))
        }
        return requests
    }

    mutating func read(_ count: Int, allowEnd: Bool) throws(ControlError) -> [UInt8]? {
        if offset == bytes.count && allowEnd { return nil }
        guard bytes.count - offset >= count else { throw ControlError("malformed request: the frame ended after \(bytes.count - offset) of \(count) bytes") }
        defer { offset += count }
        return Array(bytes[offset..<offset + count])
    }
}

/// A reply: the command's output lines and error lines; or, while following, one event.
struct ControlReply: Codable {
    var ok: Bool
    var output: [String] = []
    var errors: [String] = []
    var event: String?
}

/// A control-socket failure, as one line.
struct ControlError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
