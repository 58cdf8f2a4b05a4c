package import CBerth

/// Lays out a render pass's slots as the `berth_render_input` berth.h describes, valid for
/// one call: every value in one buffer, every path a slot is named by in another, then the
/// `berth_state_slot` array pointing into both. Used in process and by the worker.
package enum RenderInput {
    /// The view-tree version announced to plugins (`tree_version`). Only tests change it,
    /// to pose as a host of an older minor version; render passes run on the host's main
    /// thread, one at a time, so a synchronous test that sets and restores it races nothing.
    package nonisolated(unsafe) static var announcedTreeVersion = UInt32(BERTH_VIEW_TREE_VERSION)

    package static func with<T>(_ slots: [RenderSlot], _ body: (UnsafePointer<berth_render_input>) -> T) -> T {
        var values: [UInt8] = []
        var paths: [UInt8] = []
        var valueOffsets: [Int] = []
        var pathOffsets: [Int] = []
        valueOffsets.reserveCapacity(slots.count)
        pathOffsets.reserveCapacity(slots.count)
        for slot in slots {
            valueOffsets.append(values.count)
            values.append(contentsOf: slot.bytes)
            if let path = slot.identity {
                pathOffsets.append(paths.count)
                paths.append(contentsOf: path.utf8)
                paths.append(0)
            } else {
                pathOffsets.append(-1)
            }
        }
        return values.withUnsafeBufferPointer { valueBuffer in
            paths.withUnsafeBufferPointer { pathBuffer in
                var entries: [berth_state_slot] = []
                entries.reserveCapacity(slots.count)
                for (position, slot) in slots.enumerated() {
                    let value = slot.bytes.isEmpty ? nil : valueBuffer.baseAddress.map { $0 + valueOffsets[position] }
                    let path = pathOffsets[position] < 0 ? nil : pathBuffer.baseAddress.map {
                        UnsafeRawPointer($0 + pathOffsets[position]).assumingMemoryBound(to: CChar.self)
                    }
                    entries.append(berth_state_slot(identity_id: slot.identityID, index: slot.index, fingerprint: slot.fingerprint,
                                                    identity: path, value: berth_bytes(data: value, length: UInt64(slot.bytes.count))))
                }
                return entries.withUnsafeBufferPointer { entryBuffer in
                    var input = berth_render_input(struct_size: UInt32(MemoryLayout<berth_render_input>.size),
                                                   tree_version: announcedTreeVersion,
                                                   slots: entryBuffer.baseAddress, slot_count: UInt64(entryBuffer.count))
                    return withUnsafePointer(to: &input) { body($0) }
                }
            }
        }
    }
}
