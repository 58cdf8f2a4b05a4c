/// Bytes read from the socket and not yet handed out as frames. Each frame's header is
/// checked as soon as it arrives: its length against what its op may carry
/// (`IsolationWire.maximumBodySize`). A frame larger than the buffer is read straight into
/// its own body, so a big render is held once, not twice.
package final class ReceiveBuffer {
    private static let initialCapacity = 64 * 1024
    private var storage: UnsafeMutableRawPointer
    private var capacity: Int
    /// Unconsumed bytes are `start..<end`.
    private var start = 0
    private var end = 0
    /// A frame too large for the buffer, being read into its body (`filled` bytes so far).
    private var large: (kind: FrameKind, op: UInt16, callID: UInt64, body: [UInt8], filled: Int)?

    package init() {
        capacity = Self.initialCapacity
        storage = .allocate(byteCount: capacity, alignment: 8)
    }

    deinit {
        storage.deallocate()
    }

    package var isEmpty: Bool { start == end && large == nil }

    /// The kind of the frame at the front, once its kind byte is in (nil before, or while a
    /// large frame's body is being read).
    package var frontKind: FrameKind? {
        guard large == nil, end - start > 4 else { return nil }
        return FrameKind(rawValue: (storage + start).load(fromByteOffset: 4, as: UInt8.self))
    }

    /// Removes and returns the complete frame at the front, or nil when more bytes are
    /// needed (after making room for them).
    package func takeFrame() throws(WireDecodingError) -> Frame? {
        if let pending = large {
            guard pending.filled == pending.body.count else { return nil }
            large = nil
            return Frame(kind: pending.kind, op: pending.op, callID: pending.callID, body: pending.body)
        }
        let headerEnd = 4 + IsolationWire.headerSize
        let available = end - start
        guard available >= 4 else {
            reserve(frameSize: headerEnd)
            return nil
        }
        let base = UnsafeRawPointer(storage + start)
        // The length on its own first: a corrupt one fails now, not after a wait.
        let length = Int(UInt32(littleEndian: base.loadUnaligned(as: UInt32.self)))
        guard length >= IsolationWire.headerSize, length - IsolationWire.headerSize <= IsolationWire.maximumFrameSize else {
            throw WireDecodingError(detail: "frame length \(length) is outside 11...\(IsolationWire.maximumFrameSize + 11)")
        }
        guard available >= headerEnd else {
            reserve(frameSize: headerEnd)
            return nil
        }
        guard let kind = FrameKind(rawValue: base.load(fromByteOffset: 4, as: UInt8.self)) else {
            throw WireDecodingError(detail: "unknown frame kind \(base.load(fromByteOffset: 4, as: UInt8.self))")
        }
        let op = UInt16(littleEndian: base.loadUnaligned(fromByteOffset: 5, as: UInt16.self))
        let callID = UInt64(littleEndian: base.loadUnaligned(fromByteOffset: 7, as: UInt64.self))
        let bodySize = length - IsolationWire.headerSize
        let limit = IsolationWire.maximumBodySize(kind: kind, op: op)
        guard bodySize <= limit else {
            throw WireDecodingError(detail: "a \(kind) of op \(op) announces \(bodySize) bytes, over its limit of \(limit)")
        }
        let frameSize = 4 + length
        guard available >= frameSize else {
            if frameSize > capacity {
                startLargeFrame(kind: kind, op: op, callID: callID, bodySize: bodySize, from: base + headerEnd, count: available - headerEnd)
            } else {
                reserve(frameSize: frameSize)
            }
            return nil
        }
        let body = Array(UnsafeRawBufferPointer(start: base + headerEnd, count: bodySize))
        start += frameSize
        if start == end { reset() }
        return Frame(kind: kind, op: op, callID: callID, body: body)
    }

    /// Reads what the socket has into the free space (or into the large frame's body).
    package func fill(from socket: ChannelSocket) throws(ChannelError) -> ChannelSocket.ReadOutcome {
        if var pending = large {
            // Only the frame's own bytes: what follows it is read into the buffer later.
            large = nil
            let outcome = pending.body.withUnsafeMutableBytes { buffer in
                Result { () throws(ChannelError) in try socket.read(into: buffer.baseAddress! + pending.filled, capacity: buffer.count - pending.filled) }
            }
            if case .success(.bytes(let count)) = outcome { pending.filled += count }
            large = pending
            return try outcome.get()
        }
        if end == capacity { reserve(frameSize: end - start + Self.initialCapacity) }
        let outcome = try socket.read(into: storage + end, capacity: capacity - end)
        if case .bytes(let count) = outcome { end += count }
        return outcome
    }

    /// Moves the part of a large frame's body already buffered into its own array; the rest
    /// is read there by `fill`.
    private func startLargeFrame(kind: FrameKind, op: UInt16, callID: UInt64, bodySize: Int, from bytes: UnsafeRawPointer, count: Int) {
        var body = [UInt8](repeating: 0, count: bodySize)
        body.withUnsafeMutableBytes { $0.baseAddress!.copyMemory(from: bytes, byteCount: count) }
        large = (kind, op, callID, body, count)
        start = end
        reset()
    }

    /// Makes sure a frame of `frameSize` bytes starting at the front fits.
    private func reserve(frameSize: Int) {
        guard start + frameSize > capacity else { return }
        let used = end - start
        if frameSize <= capacity {
            // Room enough once the consumed front is dropped.
            storage.copyMemory(from: storage + start, byteCount: used)
        } else {
            let newCapacity = max(frameSize, capacity * 2)
            let grown = UnsafeMutableRawPointer.allocate(byteCount: newCapacity, alignment: 8)
            grown.copyMemory(from: storage + start, byteCount: used)
            storage.deallocate()
            storage = grown
            capacity = newCapacity
        }
        start = 0
        end = used
    }

    /// Empty: start over at the front, and give back a buffer a big frame grew.
    private func reset() {
        start = 0
        end = 0
        if capacity > 4 * Self.initialCapacity * 16 {
            storage.deallocate()
            capacity = Self.initialCapacity
            storage = .allocate(byteCount: capacity, alignment: 8)
        }
    }
}
