/// Bytes read from the socket and not yet handed out as frames. Grows to hold the largest
/// frame in flight (a multi-megabyte render), shrinks back when it empties.
final class ReceiveBuffer {
    private static let initialCapacity = 64 * 1024
    private var storage: UnsafeMutableRawPointer
    private var capacity: Int
    /// Unconsumed bytes are `start..<end`.
    private var start = 0
    private var end = 0

    init() {
        capacity = Self.initialCapacity
        storage = .allocate(byteCount: capacity, alignment: 8)
    }

    deinit {
        storage.deallocate()
    }

    var isEmpty: Bool { start == end }

    /// Removes and returns the complete frame at the front, or nil when more bytes are
    /// needed (after making room for them).
    func takeFrame() throws(WireDecodingError) -> Frame? {
        let headerEnd = 4 + IsolationWire.headerSize
        let available = end - start
        guard available >= 4 else {
            reserve(frameSize: headerEnd)
            return nil
        }
        let base = UnsafeRawPointer(storage + start)
        // Checked as soon as it arrives: a corrupt length fails now, not after a wait.
        let length = Int(UInt32(littleEndian: base.loadUnaligned(as: UInt32.self)))
        guard length >= IsolationWire.headerSize, length - IsolationWire.headerSize <= IsolationWire.maximumFrameSize else {
            throw WireDecodingError(detail: "frame length \(length) is outside 11...\(IsolationWire.maximumFrameSize + 11)")
        }
        let frameSize = 4 + length
        guard available >= frameSize else {
            reserve(frameSize: frameSize)
            return nil
        }
        guard let kind = FrameKind(rawValue: base.load(fromByteOffset: 4, as: UInt8.self)) else {
            throw WireDecodingError(detail: "unknown frame kind \(base.load(fromByteOffset: 4, as: UInt8.self))")
        }
        let op = UInt16(littleEndian: base.loadUnaligned(fromByteOffset: 5, as: UInt16.self))
        let callID = UInt64(littleEndian: base.loadUnaligned(fromByteOffset: 7, as: UInt64.self))
        let body = Array(UnsafeRawBufferPointer(start: base + headerEnd, count: frameSize - headerEnd))
        start += frameSize
        if start == end { reset() }
        return Frame(kind: kind, op: op, callID: callID, body: body)
    }

    /// Reads what the socket has into the free space.
    func fill(from socket: ChannelSocket) throws(ChannelError) -> ChannelSocket.ReadOutcome {
        if end == capacity { reserve(frameSize: end - start + Self.initialCapacity) }
        let outcome = try socket.read(into: storage + end, capacity: capacity - end)
        if case .bytes(let count) = outcome { end += count }
        return outcome
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
