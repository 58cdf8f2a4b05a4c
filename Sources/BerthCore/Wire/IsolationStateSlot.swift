/// The key of a state slot below a screen: the view's structural identity and the
/// property index (what `state_read` and `state_write` name).
package struct IsolationSlotKey: Sendable, Hashable {
    /// The view's structural path below the screen ("CounterScreen/VStack.1/Stepper").
    package var identity: String
    /// The property's index within the view.
    package var index: UInt32

    /// The key of property `index` of the view at `identity`.
    package init(identity: String, index: UInt32) {
        self.identity = identity
        self.index = index
    }

    package func write(to writer: inout WireWriter) {
        writer.string(identity)
        writer.u32(index)
    }

    package static func read(from reader: inout WireReader) throws(WireDecodingError) -> IsolationSlotKey {
        IsolationSlotKey(identity: try reader.string(), index: try reader.u32())
    }
}

/// One state slot with its value: sent with a render request (the screen's slots) and
/// returned with its reply (the writes the render made), and in `state_write`.
package struct IsolationStateSlot: Sendable, Equatable {
    /// Which slot.
    package var key: IsolationSlotKey
    /// The value's type fingerprint; a read with another fingerprint finds nothing.
    package var fingerprint: UInt64
    /// The encoded value.
    package var bytes: [UInt8]

    /// A slot holding `bytes` of the type with `fingerprint`.
    package init(identity: String, index: UInt32, fingerprint: UInt64, bytes: [UInt8]) {
        self.key = IsolationSlotKey(identity: identity, index: index)
        self.fingerprint = fingerprint
        self.bytes = bytes
    }

    package func write(to writer: inout WireWriter) {
        key.write(to: &writer)
        writer.u64(fingerprint)
        writer.data(bytes)
    }

    package static func read(from reader: inout WireReader) throws(WireDecodingError) -> IsolationStateSlot {
        let key = try IsolationSlotKey.read(from: &reader)
        return IsolationStateSlot(identity: key.identity, index: key.index, fingerprint: try reader.u64(), bytes: try reader.data())
    }

    /// Smallest encoded size (empty identity and bytes), to bound list counts.
    package static let minimumWireSize = 4 + 4 + 8 + 4
}
