import BerthRuntime
import CBerthSystem
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The host's control socket: a Unix domain socket, mode 0600, that only a client of the
/// host's own uid may use (checked with SO_PEERCRED) and that presents the secret the host
/// wrote beside it (`<socket>.token`, mode 0600, new for every host). A worker runs as the
/// same uid, so the uid proves nothing about it; the secret does: its sandbox can neither
/// read that file nor open a Unix socket (Docs/security.md). Each connection has its own
/// thread reading frames and writing replies; commands run on the main actor, one at a
/// time, like typed ones.
///
/// The server never removes or replaces anything but a socket: at start only a stale
/// socket (one nobody answers on) gives way, and at stop the path is removed only while it
/// is still the socket this server bound.
///
/// `path`, `listener` and `boundFile` are set once in `init`; whether it started and
/// stopped is `Locked`.
final class ControlServer: Sendable {
    /// Why a host could not listen.
    enum SetupError: Error, CustomStringConvertible {
        /// Another host answers at the path: this host runs on without a socket.
        case inUse(String)
        /// The path cannot be used (it is not a socket, it is too long, it cannot be bound):
        /// the host does not start.
        case unusable(String)

        var description: String {
            switch self {
            case .inUse(let message), .unusable(let message): message
            }
        }
    }

    /// A file's identity, to tell later whether a path still names the same file.
    struct FileIdentity: Equatable {
        var device: UInt64
        var inode: UInt64
    }

    let path: String
    /// The secret a client must send first, and the file it is kept in.
    private let token: String
    private let tokenFile: String
    private let listener: Int32
    /// The socket file as bound; stop() removes the path only while it is still this file.
    private let boundFile: FileIdentity?
    private struct Phase {
        var started = false
        var stopped = false
    }
    private let phase = Locked(Phase())

    /// Binds and listens at `path` (connections wait in the backlog until `start`). A stale
    /// socket file is replaced; anything else at the path is left alone and is an error.
    init(path: String) throws(SetupError) {
        self.path = path
        let address: sockaddr_un
        do {
            address = try ControlClient.address(path)
        } catch {
            throw .unusable(error.description)
        }
        let folder = ParentPath.of(path)
        if !folder.isEmpty {
            try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        }
        try Self.removeStaleSocket(at: path)
        tokenFile = ControlProtocol.tokenPath(forSocket: path)
        token = try Self.writeToken(to: tokenFile)

        let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else {
            unlink(tokenFile)
            throw .unusable("cannot open a socket for \(path): \(Self.lastError)")
        }
        var bindAddress = address
        // bind() never replaces an existing file: whatever appeared meanwhile makes it fail.
        let bound = withUnsafePointer(to: &bindAddress) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard bound == 0 else {
            let reason = Self.lastError
            close(descriptor)
            unlink(tokenFile)
            throw .unusable("cannot bind the control socket \(path): \(reason)")
        }
        let identity = Self.identity(ofSocketAt: path)
        // Only the file just bound gets its mode changed (chmod follows symbolic links).
        if identity != nil { chmod(path, 0o600) }
        guard listen(descriptor, 16) == 0 else {
            let reason = Self.lastError
            if let identity, Self.identity(ofSocketAt: path) == identity { unlink(path) }
            close(descriptor)
            unlink(tokenFile)
            throw .unusable("cannot listen on the control socket \(path): \(reason)")
        }
        listener = descriptor
        boundFile = identity
    }

    /// Accepts connections on a thread; `serve` runs each admitted one on a thread of its
    /// own. A refused client gets the reason as its one reply, and `onRefusal` hears it.
    func start(onRefusal: @escaping @Sendable (String) -> Void = { _ in }, serve: @escaping @Sendable (ControlConnection) -> Void) {
        let proceed = phase.withLock { phase -> Bool in
            guard !phase.stopped, !phase.started else { return false }
            phase.started = true
            return true
        }
        guard proceed else { return }
        let thread = Thread { [self] in
            while !phase.withLock({ $0.stopped }) {
                var poller = pollfd(fd: listener, events: Int16(POLLIN), revents: 0)
                guard poll(&poller, 1, 200) > 0, !phase.withLock({ $0.stopped }) else { continue }
                let client = accept(listener, nil, nil)
                guard client >= 0 else { continue }
                // Not inherited by a re-exec'd host (`restart`).
                _ = fcntl(client, F_SETFD, FD_CLOEXEC)
                let connection = ControlConnection(descriptor: client)
                Thread { [self] in
                    if let refusal = admit(connection) {
                        connection.reply(ControlReply(ok: false, errors: [refusal]))
                        connection.finish()
                        onRefusal(refusal)
                        return
                    }
                    serve(connection)
                }.start()
            }
            // The listener is closed by the thread that polls it, never under its feet.
            close(listener)
        }
        thread.name = "berth.control"
        thread.start()
    }

    /// Stops accepting, and removes the socket file if the path still names it.
    func stop() {
        phase.withLock { phase in
            guard !phase.stopped else { return }
            phase.stopped = true
            // Compared while the listener is still open: it keeps the bound file's inode
            // alive, so its number cannot have been given to another file meanwhile.
            if let boundFile, Self.identity(ofSocketAt: path) == boundFile {
                unlink(path)
                unlink(tokenFile)
            }
            if phase.started {
                // Wakes the accepting thread's poll; that thread closes the listener once
                // it sees `stopped`, which it can only after this lock is released.
                shutdown(listener, Int32(SHUT_RDWR))
            } else {
                close(listener)
            }
        }
    }

    /// Checks the peer's uid, then reads the connection's first frame: nil when it is the
    /// host's secret, else the reason to refuse. A client has 5 seconds to send it.
    private func admit(_ connection: ControlConnection) -> String? {
        if let refusal = Self.checkPeer(connection.descriptor) { return refusal }
        var timeout = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(connection.descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        defer {
            var none = timeval(tv_sec: 0, tv_usec: 0)
            setsockopt(connection.descriptor, SOL_SOCKET, SO_RCVTIMEO, &none, socklen_t(MemoryLayout<timeval>.size))
        }
        let refusal = "refused: the client did not present this host's control token (\(tokenFile))"
        guard let frame = try? ControlProtocol.readFrame(from: connection.descriptor),
              let hello = try? JSONDecoder().decode(ControlHello.self, from: Data(frame)) else { return refusal }
        return Self.sameSecret(Array(hello.token.utf8), Array(token.utf8)) ? nil : refusal
    }

    /// Compares in time that depends on the length only.
    private static func sameSecret(_ given: [UInt8], _ expected: [UInt8]) -> Bool {
        guard given.count == expected.count else { return false }
        return zip(given, expected).reduce(UInt8(0)) { $0 | ($1.0 ^ $1.1) } == 0
    }

    /// A new secret, written to `path` (mode 0600, replacing a stale file a crashed host
    /// left there; a symbolic link is removed, never followed).
    private static func writeToken(to path: String) throws(SetupError) -> String {
        var generator = SystemRandomNumberGenerator()
        let token = (0..<32).map { _ in String(format: "%02x", UInt8.random(in: 0...255, using: &generator)) }.joined()
        if unlink(path) != 0 && errno != ENOENT {
            throw .unusable("cannot replace the control token \(path): \(lastError)")
        }
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw .unusable("cannot write the control token \(path): \(lastError)") }
        defer { close(descriptor) }
        let bytes = Array(token.utf8)
        guard write(descriptor, bytes, bytes.count) == bytes.count else {
            unlink(path)
            throw .unusable("cannot write the control token \(path): \(lastError)")
        }
        return token
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

    // MARK: The path

    /// The identity of the socket file at `path`; nil when the path names no socket.
    static func identity(ofSocketAt path: String) -> FileIdentity? {
        var info = stat()
        guard lstat(path, &info) == 0, info.st_mode & S_IFMT == S_IFSOCK else { return nil }
        return FileIdentity(device: UInt64(info.st_dev), inode: UInt64(info.st_ino))
    }

    /// Makes way for a new socket at `path`: nothing there is fine; a socket nobody answers
    /// on (left by a host that crashed) is removed; a socket a host answers on, or anything
    /// that is not a socket, stays and is an error.
    private static func removeStaleSocket(at path: String) throws(SetupError) {
        var info = stat()
        guard lstat(path, &info) == 0 else {
            if errno == ENOENT { return }
            throw .unusable("cannot use \(path) for the control socket: \(lastError)")
        }
        guard info.st_mode & S_IFMT == S_IFSOCK else {
            throw .unusable("\(path) exists and is \(kind(of: info.st_mode)), not a socket; refusing to replace it (remove it or pass another --socket PATH)")
        }
        let found = FileIdentity(device: UInt64(info.st_dev), inode: UInt64(info.st_ino))
        switch probe(path) {
        case 0:
            throw .inUse("another host is listening at \(path); stop it or pass --socket PATH")
        case EAGAIN:
            throw .inUse("another host is listening at \(path) (its backlog is full); stop it or pass --socket PATH")
        case ECONNREFUSED:
            // Stale. Removed only if it is still the socket just probed.
            guard identity(ofSocketAt: path) == found else {
                throw .unusable("\(path) changed while it was being checked; not replacing it")
            }
            guard unlink(path) == 0 || errno == ENOENT else {
                throw .unusable("cannot remove the stale socket \(path): \(lastError)")
            }
        case let failure:
            throw .unusable("cannot tell whether a host is listening at \(path) (\(String(cString: strerror(failure)))); not replacing it")
        }
    }

    /// Tries to connect, without waiting: 0 when something answers, else the errno.
    private static func probe(_ path: String) -> Int32 {
        guard var address = try? ControlClient.address(path) else { return ENAMETOOLONG }
        let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        guard descriptor >= 0 else { return errno }
        defer { close(descriptor) }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        return connected == 0 ? 0 : errno
    }

    private static func kind(of mode: mode_t) -> String {
        switch mode & S_IFMT {
        case S_IFREG: "a regular file"
        case S_IFDIR: "a folder"
        case S_IFLNK: "a symbolic link"
        case S_IFIFO: "a named pipe"
        case S_IFCHR, S_IFBLK: "a device"
        default: "something else"
        }
    }

    private static var lastError: String { String(cString: strerror(errno)) }
}
