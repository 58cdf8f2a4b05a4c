/// One state slot as a render pass hands it to the plugin (`berth_state_slot`): named by
/// the identity id the plugin's trees defined, or by its path when the plugin has not
/// defined it yet (state kept across a reload, a slot a C call wrote).
package struct RenderSlot: Sendable, Equatable {
    /// `BERTH_IDENTITY_UNKNOWN`: the slot is named by `identity` instead.
    package static let unknownIdentity = UInt32.max

    package var identityID: UInt32
    package var identity: String?
    package var index: UInt32
    package var fingerprint: UInt64
    package var bytes: [UInt8]

    package init(identityID: UInt32, identity: String?, index: UInt32, fingerprint: UInt64, bytes: [UInt8]) {
        self.identityID = identityID
        self.identity = identity
        self.index = index
        self.fingerprint = fingerprint
        self.bytes = bytes
    }

    package func write(to writer: inout WireWriter) {
        writer.u32(identityID)
        writer.optionalString(identity)
        writer.u32(index)
        writer.u64(fingerprint)
        writer.data(bytes)
    }

    package static func read(from reader: inout WireReader) throws(WireDecodingError) -> RenderSlot {
        RenderSlot(identityID: try reader.u32(), identity: try reader.optionalString(), index: try reader.u32(),
                   fingerprint: try reader.u64(), bytes: try reader.data())
    }

    /// Smallest encoded size, to bound list counts.
    package static let minimumWireSize = 4 + 1 + 4 + 8 + 4
}
