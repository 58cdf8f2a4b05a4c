import BerthRuntime
import CBerthSystem
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The host's control socket: a Unix domain socket, mode 0600, that only a client of the
/// host's own uid may use (checked with SO_PEERCRED). Each connection has its own thread
/// reading frames; commands run on the main actor, one at a time, like typed ones.
///
/// `@unchecked Sendable`: `listener` is set once; `stopped` is guarded by `lock`.
final class ControlServer: @unchecked Sendable {
    let path: String
    private let listener: Int32
    private let lock = NSLock()
    private var stopped = false

    /// Binds and listens at `path`. A stale socket file (no one listening) is replaced; a
    /// live one is an error naming the path.
    init(path: String) throws(ControlError) {
        self.path = path
        let folder = (path as NSString).deletingLastPathComponent
        try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        if FileManager.default.fileExists(atPath: path) {
            if let probe = try? ControlClient.connect(path) {
                close(probe)
                throw ControlError("another host is listening at \(path); stop it or pass --socket PATH")
            }
            unlink(path)
        }
        let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { throw ControlError("socket: \(String(cString: strerror(errno)))") }
        var address = try ControlClient.address(path)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard bound == 0 else {
            close(descriptor)
            throw ControlError("cannot bind \(path): \(String(cString: strerror(errno)))")
        }
        chmod(path, 0o600)
        guard listen(descriptor, 16) == 0 else {
            close(descriptor)
            throw ControlError("cannot listen on \(path): \(String(cString: strerror(errno)))")
        }
        listener = descriptor
    }

    /// Accepts connections on a thread; `serve` runs each on a thread of its own.
    func start(serve: @escaping @Sendable (ControlConnection) -> Void) {
        let thread = Thread { [self] in
            while !lock.withLock({ stopped }) {
                var poller = pollfd(fd: listener, events: Int16(POLLIN), revents: 0)
                guard poll(&poller, 1, 200) > 0 else { continue }
                let client = accept(listener, nil, nil)
                guard client >= 0 else { continue }
                // Not inherited by a re-exec'd host (`restart`).
                _ = fcntl(client, F_SETFD, FD_CLOEXEC)
                let connection = ControlConnection(descriptor: client)
                Thread { serve(connection) }.start()
            }
        }
        thread.name = "berth.control"
        thread.start()
    }

    func stop() {
        let first = lock.withLock { () -> Bool in
            defer { stopped = true }
            return !stopped
        }
        guard first else { return }
        close(listener)
        unlink(path)
    }

    /// True when the peer of `descriptor` runs as this process's uid. The reason when not.
    static func checkPeer(_ descriptor: Int32, expectedUID: uid_t = getuid()) -> String? {
        var uid: UInt32 = 0
        var pid: Int32 = 0
        let failure = berth_peer_credentials(descriptor, &uid, &pid)
        guard failure == 0 else { return "cannot read the peer's credentials: \(String(cString: strerror(failure)))" }
        guard uid == expectedUID else { return "refused: the client runs as uid \(uid), this host as uid \(expectedUID)" }
        return nil
    }
}

/// One client connection (owned by its thread).
final class ControlConnection: @unchecked Sendable {
    // @unchecked: the descriptor is used by the connection's own thread, and by the main
    // actor only to push `events --follow` frames, which `send` serializes with a lock.
    let descriptor: Int32
    private let lock = NSLock()

    init(descriptor: Int32) {
        self.descriptor = descriptor
        var timeout = timeval(tv_sec: 2, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    @discardableResult
    func send(_ reply: ControlReply) -> Bool {
        lock.withLock { ControlProtocol.writeFrame(ControlProtocol.encode(reply), to: descriptor) }
    }

    func close() {
        Glibc.close(descriptor)
    }
}
