/// The channel's wire format, version 1.
///
/// Every frame is `u32 length` (of what follows), `u8 kind`, `u16 op`, `u64 call id`, then
/// the body; all integers little-endian. A request carries a call id of the sender's own
/// numbering, its reply echoes it, a notification carries 0 and gets no reply. Bodies are
/// written by `WireWriter`: fixed-width integers, `u32`-length-prefixed strings and bytes.
package enum IsolationWire {
    /// Bumped on any incompatible change; checked by the worker at hello.
    public static let version: UInt32 = 2
    /// Bytes after the length field that every frame has (kind, op, call id).
    static let headerSize = 1 + 2 + 8
    /// The largest body accepted (a multi-megabyte render is far below it); a length past
    /// it means the stream is corrupt.
    static let maximumFrameSize = 1 << 30
}

/// What a frame is.
enum FrameKind: UInt8 {
    case request = 1
    case reply = 2
    case notification = 3
}

/// One received frame, header decoded, body still encoded.
struct Frame {
    let kind: FrameKind
    let op: UInt16
    let callID: UInt64
    let body: [UInt8]

    /// The encoded frame: header, then whatever `body` writes.
    static func encode(kind: FrameKind, op: UInt16, callID: UInt64, reservingCapacity: Int = 64,
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
