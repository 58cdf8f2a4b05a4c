internal import CBerth

/// The state slots the host handed a render pass (`berth_render_input`), indexed for the
/// pass: `@State` reads its slot from here instead of calling `state_read`, and every slot
/// used is marked in the bitmap that goes back with the tree (the host's render-pass GC).
final class SlotBatch {
    private let slots: UnsafeBufferPointer<berth_state_slot>
    /// First slot position per identity id (-1: none); `next` chains further indices.
    @exclusivity(unchecked) private var first: [Int32]
    @exclusivity(unchecked) private var next: [Int32]
    /// Slots the host could name only by path, by path.
    private var byPath: [String: [Int]] = [:]
    /// Bit i set when slot i was used.
    @exclusivity(unchecked) private(set) var alive: [UInt8]

    init(_ input: UnsafePointer<berth_render_input>?) {
        guard let input, input.pointee.struct_size >= UInt32(MemoryLayout<berth_render_input>.size), let base = input.pointee.slots else {
            slots = UnsafeBufferPointer(start: nil, count: 0)
            first = []
            next = []
            alive = []
            return
        }
        slots = UnsafeBufferPointer(start: base, count: Int(input.pointee.slot_count))
        var highest = -1
        for slot in slots where slot.identity_id != BERTH_IDENTITY_UNKNOWN { highest = max(highest, Int(slot.identity_id)) }
        first = Array(repeating: -1, count: highest + 1)
        next = Array(repeating: -1, count: slots.count)
        alive = Array(repeating: 0, count: (slots.count + 7) / 8)
        for position in slots.indices.reversed() {
            let slot = slots[position]
            if slot.identity_id == BERTH_IDENTITY_UNKNOWN {
                if let path = slot.identity { byPath[String(cString: path), default: []].append(position) }
            } else {
                next[position] = first[Int(slot.identity_id)]
                first[Int(slot.identity_id)] = Int32(position)
            }
        }
    }

    /// The bytes of slot (identity, index) when its fingerprint matches; the slot counts as
    /// used either way, as a `state_read` would.
    func read(_ slot: StateSlot, fingerprint: UInt64) -> [UInt8]? {
        guard let position = position(of: slot) else { return nil }
        alive[position >> 3] |= 1 << UInt8(position & 7)
        let slot = slots[position]
        guard slot.fingerprint == fingerprint else { return nil }
        guard let data = slot.value.data, slot.value.length > 0 else { return [] }
        return Array(UnsafeBufferPointer(start: data, count: Int(slot.value.length)))
    }

    private func position(of slot: StateSlot) -> Int? {
        if Int(slot.id) < first.count {
            var position = first[Int(slot.id)]
            while position >= 0 {
                if slots[Int(position)].index == slot.index { return Int(position) }
                position = next[Int(position)]
            }
        }
        guard !byPath.isEmpty, let candidates = byPath[slot.identity] else { return nil }
        return candidates.first { slots[$0].index == slot.index }
    }
}
