import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The client side: `berth status`, `berth reload`, … from another terminal.
enum ControlClient {
    static func address(_ path: String) throws(ControlError) -> sockaddr_un {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        let capacity = MemoryLayout.size(ofValue: address.sun_path)
        guard !bytes.isEmpty else { throw ControlError("the socket path is empty") }
        guard !bytes.contains(0) else { throw ControlError("the socket path \(path) contains a NUL byte") }
        guard bytes.count < capacity else {
            throw ControlError("the socket path \(path) is \(bytes.count) bytes long; a Unix socket path can be at most \(capacity - 1) bytes")
        }
        withUnsafeMutableBytes(of: &address.sun_path) { buffer in
            buffer.copyBytes(from: bytes)
            buffer[bytes.count] = 0
        }
        return address
    }

    /// Connects to a host's socket and presents the host's secret (`ControlProtocol.tokenPath`).
    static func connect(_ path: String) throws(ControlError) -> Int32 {
        var address = try address(path)
        let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { throw ControlError("socket: \(String(cString: strerror(errno)))") }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard connected == 0 else {
            let reason = String(cString: strerror(errno))
            close(descriptor)
            throw ControlError("no host is listening at \(path) (\(reason)); start one with `berth run`, or pass --socket PATH")
        }
        // A client that cannot read the token (another user; a sandboxed plugin, were it
        // let this far) sends none, and the host answers the next frame with its refusal.
        let token = (try? String(contentsOfFile: ControlProtocol.tokenPath(forSocket: path), encoding: .utf8)) ?? ""
        _ = ControlProtocol.writeFrame(ControlProtocol.encode(ControlHello(token: token)), to: descriptor)
        return descriptor
    }

    /// Sends one request and returns its reply.
    static func request(_ args: [String], socket path: String) throws(ControlError) -> ControlReply {
        let descriptor = try connect(path)
        defer { close(descriptor) }
        return try exchange(args, on: descriptor, host: path)
    }

    /// Sends one request on a connected socket and reads the reply. A host that refuses a
    /// client answers before reading the request, and may have stopped reading already:
    /// when the request cannot be written, the reply is still read, so the refusal is what
    /// the client reports.
    static func exchange(_ args: [String], on descriptor: Int32, host path: String) throws(ControlError) -> ControlReply {
        let sent = ControlProtocol.writeFrame(ControlProtocol.encode(ControlRequest(args: args)), to: descriptor)
        guard let frame = try? ControlProtocol.readFrame(from: descriptor) else {
            throw ControlError(sent ? "the host at \(path) closed the connection without a reply" : "the host at \(path) closed the connection")
        }
        guard let reply = try? JSONDecoder().decode(ControlReply.self, from: Data(frame)) else {
            throw ControlError("the host at \(path) sent a reply that is not JSON")
        }
        return reply
    }

    /// Sends `events --follow` and calls `each` for every event line until the host closes.
    /// An error frame (a refusal, or `dropped: too slow` for a client that fell behind)
    /// ends the stream and is thrown.
    static func follow(socket path: String, _ each: (String) -> Void) throws(ControlError) {
        let descriptor = try connect(path)
        defer { close(descriptor) }
        let sent = ControlProtocol.writeFrame(ControlProtocol.encode(ControlRequest(args: ["events", "--follow"])), to: descriptor)
        var received = false
        while true {
            let next: [UInt8]?
            do {
                next = try ControlProtocol.readFrame(from: descriptor)
            } catch {
                throw ControlError("the host at \(path) broke off the connection")
            }
            guard let frame = next else { break }
            received = true
            guard let reply = try? JSONDecoder().decode(ControlReply.self, from: Data(frame)) else { continue }
            if let event = reply.event { each(event) }
            if !reply.ok || !reply.errors.isEmpty {
                throw ControlError(reply.errors.isEmpty ? "the host at \(path) ended the stream with an error" : reply.errors.joined(separator: "; "))
            }
        }
        if !sent && !received { throw ControlError("the host at \(path) closed the connection") }
    }
}
