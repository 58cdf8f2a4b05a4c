/// Why a call, notification or wait on an `IsolationChannel` failed.
///
/// `peerClosed` is the one to watch: the other process died (EOF, broken pipe or reset),
/// which for a worker means its plugin crashed or was killed. It is never a trap.
package struct ChannelError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What kind of failure.
    package enum Code: String, Sendable, Equatable {
        /// The peer closed its end: end of file, `EPIPE` or `ECONNRESET`.
        case peerClosed
        /// No reply within the timeout (see `IsolationChannel.call`).
        case timedOut
        /// A frame or message body that does not decode.
        case malformed
        /// A well-formed frame where none may come (a reply to no pending call).
        case protocolViolation
        /// This side already closed the channel.
        case closed
        /// A system call failed with another errno.
        case system
    }

    /// What kind of failure.
    package var code: Code
    /// Who is at the other end: a plugin id, or "host" in a worker.
    package var peer: String
    /// What was being done ("call render", "read", "notify log").
    package var operation: String
    /// `strerror` text of the failing system call, when there was one.
    package var errnoText: String?
    /// Anything more specific (the decoding failure, the timeout).
    package var detail: String?

    /// A failure of `operation` with `peer`.
    package init(_ code: Code, peer: String, operation: String, errnoText: String? = nil, detail: String? = nil) {
        self.code = code
        self.peer = peer
        self.operation = operation
        self.errnoText = errnoText
        self.detail = detail
    }

    /// One line for a user: what failed, with whom, and why.
    package var message: String {
        let what: String
        switch code {
        case .peerClosed: what = "the other process is gone (its end of the channel closed)"
        case .timedOut: what = "no reply in time"
        case .malformed: what = "a malformed message arrived"
        case .protocolViolation: what = "the other side broke the protocol"
        case .closed: what = "the channel is closed"
        case .system: what = "a system call failed"
        }
        var text = "\(peer): \(operation): \(what)"
        if let detail { text += ": \(detail)" }
        if let errnoText { text += " (\(errnoText))" }
        return text
    }

    package var description: String { message }
}
