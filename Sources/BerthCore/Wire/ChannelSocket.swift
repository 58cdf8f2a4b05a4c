internal import Glibc

/// The system calls under an `IsolationChannel`: one non-blocking `SOCK_STREAM` socket,
/// waited on with `poll` so every wait can have a deadline. errno becomes a typed
/// `ChannelError`; `EPIPE`, `ECONNRESET` and end of file are `peerClosed`.
package struct ChannelSocket {
    package let descriptor: Int32
    package let peer: String

    /// A connected pair, both ends close-on-exec (the spawner dup2s one into the child).
    package static func makePair(peer: String) throws(ChannelError) -> (Int32, Int32) {
        var descriptors: [Int32] = [-1, -1]
        let type = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        guard socketpair(AF_UNIX, type, 0, &descriptors) == 0 else {
            throw ChannelError(.system, peer: peer, operation: "socketpair", errnoText: errnoText())
        }
        return (descriptors[0], descriptors[1])
    }

    /// Makes the descriptor non-blocking: waits go through `poll` with a deadline.
    package func makeNonBlocking() throws(ChannelError) {
        let flags = fcntl(descriptor, F_GETFL)
        guard flags >= 0, fcntl(descriptor, F_SETFL, flags | O_NONBLOCK) == 0 else {
            throw ChannelError(.system, peer: peer, operation: "fcntl O_NONBLOCK", errnoText: Self.errnoText())
        }
    }

    package enum ReadOutcome {
        case bytes(Int)
        case wouldBlock
    }

    /// Reads what is there into `buffer`; end of file throws `peerClosed`.
    package func read(into buffer: UnsafeMutableRawPointer, capacity: Int) throws(ChannelError) -> ReadOutcome {
        while true {
            let count = recv(descriptor, buffer, capacity, 0)
            if count > 0 { return .bytes(count) }
            if count == 0 { throw ChannelError(.peerClosed, peer: peer, operation: "read", detail: "end of file") }
            let code = errno
            switch code {
            case EINTR: continue
            case EAGAIN, EWOULDBLOCK: return .wouldBlock
            case ECONNRESET, EPIPE: throw ChannelError(.peerClosed, peer: peer, operation: "read", errnoText: Self.errnoText(code))
            default: throw ChannelError(.system, peer: peer, operation: "read", errnoText: Self.errnoText(code))
            }
        }
    }

    /// Writes every byte of `bytes`; waits for room until `deadline` (nil: as long as it
    /// takes). Returns how many bytes went out before a failure, with the failure.
    package func writeAll(_ bytes: [UInt8], deadline: ContinuousClock.Instant?, operation: String) -> (written: Int, failure: ChannelError?) {
        bytes.withUnsafeBytes { buffer -> (Int, ChannelError?) in
            guard let base = buffer.baseAddress else { return (0, nil) }
            var written = 0
            while written < buffer.count {
                // MSG_NOSIGNAL: a dead peer is EPIPE here, never a SIGPIPE that kills us.
                let count = send(descriptor, base + written, buffer.count - written, Int32(MSG_NOSIGNAL))
                if count >= 0 {
                    written += count
                    continue
                }
                let code = errno
                switch code {
                case EINTR: continue
                case EAGAIN, EWOULDBLOCK:
                    do throws(ChannelError) {
                        guard try wait(for: Int16(POLLOUT), until: deadline, operation: operation) else {
                            return (written, ChannelError(.timedOut, peer: peer, operation: operation, detail: "the peer stopped reading"))
                        }
                    } catch {
                        return (written, error)
                    }
                case EPIPE, ECONNRESET:
                    return (written, ChannelError(.peerClosed, peer: peer, operation: operation, errnoText: Self.errnoText(code)))
                default:
                    return (written, ChannelError(.system, peer: peer, operation: operation, errnoText: Self.errnoText(code)))
                }
            }
            return (written, nil)
        }
    }

    /// One non-blocking send of `bytes`: how many the socket took (0 when it would block, or
    /// on an error the next full write meets again).
    package func sendOnce(_ bytes: [UInt8]) -> Int {
        let count = bytes.withUnsafeBytes { send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        return max(count, 0)
    }

    /// Waits until the socket is readable; false when `deadline` passed first. A hang-up
    /// counts as readable: the next read sees the end of file.
    package func waitReadable(until deadline: ContinuousClock.Instant?, operation: String) throws(ChannelError) -> Bool {
        try wait(for: Int16(POLLIN), until: deadline, operation: operation)
    }

    /// Waits until `events` (POLLIN or POLLOUT) are ready; false when `deadline` passed first.
    private func wait(for events: Int16, until deadline: ContinuousClock.Instant?, operation: String) throws(ChannelError) -> Bool {
        while true {
            var entry = pollfd(fd: descriptor, events: events, revents: 0)
            let result = poll(&entry, 1, Self.milliseconds(until: deadline))
            if result > 0 {
                if entry.revents & Int16(POLLNVAL) != 0 {
                    throw ChannelError(.closed, peer: peer, operation: operation, detail: "the descriptor is not open")
                }
                return true
            }
            if result == 0 {
                if let deadline, ContinuousClock.now < deadline { continue }
                return false
            }
            let code = errno
            if code == EINTR { continue }
            throw ChannelError(.system, peer: peer, operation: "\(operation) (poll)", errnoText: Self.errnoText(code))
        }
    }

    /// `poll`'s timeout: -1 forever, else the milliseconds left, rounded up.
    private static func milliseconds(until deadline: ContinuousClock.Instant?) -> Int32 {
        guard let deadline else { return -1 }
        let left = deadline - ContinuousClock.now
        guard left > .zero else { return 0 }
        let (seconds, attoseconds) = left.components
        let milliseconds = seconds * 1000 + (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000
        return Int32(clamping: milliseconds)
    }

    /// Wakes any `poll` on this socket and makes the peer see end of file; the descriptor
    /// itself stays open until `close` (closing it under another thread's poll is a race).
    package func shutDown() {
        _ = Glibc.shutdown(descriptor, Int32(SHUT_RDWR))
    }

    package func close() {
        _ = Glibc.close(descriptor)
    }

    package static func errnoText(_ code: Int32 = errno) -> String {
        "\(String(cString: strerror(code))) (errno \(code))"
    }
}
