/// The channel's wire format, version 1.
///
/// Every frame is `u32 length` (of what follows), `u8 kind`, `u16 op`, `u64 call id`, then
/// the body; all integers little-endian. A request carries a call id of the sender's own
/// numbering, its reply echoes it, a notification carries 0 and gets no reply. Bodies are
/// written by `WireWriter`: fixed-width integers, `u32`-length-prefixed strings and bytes.
package enum IsolationWire {
    /// Bumped on any incompatible change; checked by the worker at hello.
    public static let version: UInt32 = 4
    /// Bytes after the length field that every frame has (kind, op, call id).
    package static let headerSize = 1 + 2 + 8
    /// The largest body any frame may have (a render of `RenderLimits.maximumBytes` is well
    /// below it); what one op may carry is `maximumBodySize(kind:op:)`.
    package static let maximumFrameSize = 64 << 20
    /// The most a frame of a small op carries (a status, a handshake, a log line, an op
    /// this side does not know).
    package static let smallBodySize = 1 << 20

    /// Replies that carry bulk: a render (`rendered`, `acted`), saved or read bytes, an export's result.
    private static let bulkReplyOps: Set<UInt16> = [104, 105, 108, 111]
    /// Notifications that carry bulk: a task's post, a state write.
    private static let bulkNotificationOps: Set<UInt16> = [203, 205]

    /// The largest body a frame of `kind` and `op` may announce. Checked as soon as the
    /// frame's header arrives, before anything is buffered for it: a peer cannot make this
    /// side hold a gigabyte for an op that never carries one. Requests (ops below 100) may
    /// carry bulk: state batches, arguments, payloads.
    package static func maximumBodySize(kind: FrameKind, op: UInt16) -> Int {
        switch kind {
        case .request: op < 100 ? maximumFrameSize : smallBodySize
        case .reply: bulkReplyOps.contains(op) ? maximumFrameSize : smallBodySize
        case .notification: bulkNotificationOps.contains(op) ? maximumFrameSize : smallBodySize
        }
    }
}

/// What a frame is.
package enum FrameKind: UInt8, CustomStringConvertible {
    case request = 1
    case reply = 2
    case notification = 3

    package var description: String {
        switch self {
        case .request: "request"
        case .reply: "reply"
        case .notification: "notification"
        }
    }
}

/// One received frame, header decoded, body still encoded.
package struct Frame {
    package let kind: FrameKind
    package let op: UInt16
    package let callID: UInt64
    package let body: [UInt8]

    /// The encoded frame: header, then whatever `body` writes.
    package static func encode(kind: FrameKind, op: UInt16, callID: UInt64, reservingCapacity: Int = 64,
                       body: (inout WireWriter) -> Void) -> [UInt8] {
        var writer = WireWriter(reservingCapacity: 4 + IsolationWire.headerSize + reservingCapacity)
        writer.u32(0)
        writer.u8(kind.rawValue)
        writer.u16(op)
        writer.u64(callID)
        body(&writer)
        writer.patchU32(UInt32(truncatingIfNeeded: writer.bytes.count - 4), at: 0)
        return writer.bytes
    }
}
