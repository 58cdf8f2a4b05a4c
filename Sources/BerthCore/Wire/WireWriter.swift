/// Builds the body of one frame: little-endian fixed-width integers, IEEE floats by bit
/// pattern, strings and byte buffers as a `u32` length followed by the bytes.
package struct WireWriter {
    package private(set) var bytes: [UInt8]

    package init(reservingCapacity capacity: Int = 64) {
        bytes = []
        bytes.reserveCapacity(capacity)
    }

    package mutating func u8(_ value: UInt8) { bytes.append(value) }
    package mutating func bool(_ value: Bool) { bytes.append(value ? 1 : 0) }
    package mutating func u16(_ value: UInt16) { integer(value) }
    package mutating func u32(_ value: UInt32) { integer(value) }
    package mutating func u64(_ value: UInt64) { integer(value) }
    package mutating func i32(_ value: Int32) { integer(value) }

    package mutating func integer<T: FixedWidthInteger>(_ value: T) {
        withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
    }

    package mutating func float(_ value: Float) { u32(value.bitPattern) }
    package mutating func double(_ value: Double) { u64(value.bitPattern) }

    package mutating func string(_ value: String) {
        var value = value
        value.withUTF8 { utf8 in
            u32(UInt32(truncatingIfNeeded: utf8.count))
            bytes.append(contentsOf: utf8)
        }
    }

    /// A string that may be absent (a NULL `const char *`): a presence byte, then the string.
    package mutating func optionalString(_ value: String?) {
        bool(value != nil)
        if let value { string(value) }
    }

    package mutating func data(_ value: [UInt8]) {
        u32(UInt32(truncatingIfNeeded: value.count))
        bytes.append(contentsOf: value)
    }

    /// A `u32` count, then each element.
    package mutating func list<Element>(_ elements: [Element], _ write: (inout WireWriter, Element) -> Void) {
        u32(UInt32(truncatingIfNeeded: elements.count))
        for element in elements { write(&self, element) }
    }

    /// Overwrites 4 bytes at `offset` (the frame length, known only at the end).
    package mutating func patchU32(_ value: UInt32, at offset: Int) {
        withUnsafeBytes(of: value.littleEndian) { source in
            for index in 0..<4 { bytes[offset + index] = source[index] }
        }
    }
}
