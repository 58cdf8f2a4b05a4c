/// Why a frame body could not be decoded; the channel turns it into a `ChannelError`
/// naming the peer and the operation.
package struct WireDecodingError: Error {
    package let detail: String
}

/// Reads a frame body written by `WireWriter`. Every read checks the remaining length, so
/// a truncated or hostile body throws instead of reading past the end or allocating a
/// count it cannot hold.
package struct WireReader {
    private let bytes: [UInt8]
    private var offset: Int

    package init(_ bytes: [UInt8]) {
        self.bytes = bytes
        self.offset = 0
    }

    package var remaining: Int { bytes.count - offset }

    package mutating func u8() throws(WireDecodingError) -> UInt8 {
        try need(1, "u8")
        defer { offset += 1 }
        return bytes[offset]
    }

    package mutating func bool() throws(WireDecodingError) -> Bool {
        switch try u8() {
        case 0: return false
        case 1: return true
        case let other: throw WireDecodingError(detail: "byte \(other) is not a bool")
        }
    }

    package mutating func u16() throws(WireDecodingError) -> UInt16 { try integer() }
    package mutating func u32() throws(WireDecodingError) -> UInt32 { try integer() }
    package mutating func u64() throws(WireDecodingError) -> UInt64 { try integer() }
    package mutating func i32() throws(WireDecodingError) -> Int32 { try integer() }

    package mutating func integer<T: FixedWidthInteger>(_: T.Type = T.self) throws(WireDecodingError) -> T {
        let size = MemoryLayout<T>.size
        try need(size, "\(T.self)")
        var value = T.zero
        for index in 0..<size {
            value |= T(truncatingIfNeeded: bytes[offset + index]) << (8 * index)
        }
        offset += size
        return value
    }

    package mutating func float() throws(WireDecodingError) -> Float { Float(bitPattern: try u32()) }
    package mutating func double() throws(WireDecodingError) -> Double { Double(bitPattern: try u64()) }

    package mutating func string() throws(WireDecodingError) -> String {
        let count = Int(try u32())
        try need(count, "string")
        defer { offset += count }
        return String(decoding: bytes[offset..<offset + count], as: UTF8.self)
    }

    package mutating func optionalString() throws(WireDecodingError) -> String? {
        try bool() ? try string() : nil
    }

    package mutating func data() throws(WireDecodingError) -> [UInt8] {
        let count = Int(try u32())
        try need(count, "bytes")
        defer { offset += count }
        return Array(bytes[offset..<offset + count])
    }

    /// A `u32` count, then each element; `minimumElementSize` bounds the count by what is
    /// left, so a bad count fails before anything is allocated.
    package mutating func list<Element>(
        minimumElementSize: Int, _ read: (inout WireReader) throws(WireDecodingError) -> Element
    ) throws(WireDecodingError) -> [Element] {
        let count = Int(try u32())
        guard count * max(1, minimumElementSize) <= remaining else {
            throw WireDecodingError(detail: "a list of \(count) elements does not fit in the \(remaining) bytes left")
        }
        var elements: [Element] = []
        elements.reserveCapacity(count)
        for _ in 0..<count { elements.append(try read(&self)) }
        return elements
    }

    /// Fails when bytes are left over: a body must be read exactly.
    package func finish() throws(WireDecodingError) {
        guard remaining == 0 else { throw WireDecodingError(detail: "\(remaining) unexpected byte(s) after the message") }
    }

    private func need(_ count: Int, _ what: String) throws(WireDecodingError) {
        guard count >= 0, count <= remaining else {
            throw WireDecodingError(detail: "truncated \(what): needs \(count) byte(s), \(remaining) left")
        }
    }
}
