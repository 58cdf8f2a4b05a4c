import BerthCore
/// The state slots of one screen during its render: `state_read` is served from them (no
/// round trip per slot), `state_write` updates them, and both are recorded for the reply
/// so the host's render-pass GC and storage see exactly what an in-process render does.
final class RenderBatch {
    private var slots: [IsolationStateSlot]
    /// How many slots the request carried (later ones were written during the render).
    private let requestCount: Int
    private var positions: [IsolationSlotKey: Int]
    private var read: [Bool]
    private var missing: [IsolationSlotKey] = []
    private var missingSeen: Set<IsolationSlotKey> = []
    private var writes: [IsolationStateSlot] = []

    init(slots: [IsolationStateSlot]) {
        self.slots = slots
        self.requestCount = slots.count
        self.read = Array(repeating: false, count: slots.count)
        var positions: [IsolationSlotKey: Int] = [:]
        positions.reserveCapacity(slots.count)
        for (position, slot) in slots.enumerated() where positions[slot.key] == nil {
            positions[slot.key] = position
        }
        self.positions = positions
    }

    /// The value at `key` when its fingerprint matches (a slot of another type reads as
    /// empty); the read is recorded either way, as the host's storage marks it alive.
    func read(_ key: IsolationSlotKey, fingerprint: UInt64) -> [UInt8]? {
        guard let position = positions[key] else {
            if missingSeen.insert(key).inserted { missing.append(key) }
            return nil
        }
        if position < requestCount { read[position] = true }
        let slot = slots[position]
        return slot.fingerprint == fingerprint ? slot.bytes : nil
    }

    func write(_ slot: IsolationStateSlot) {
        writes.append(slot)
        if let position = positions[slot.key] {
            slots[position] = slot
        } else {
            positions[slot.key] = slots.count
            slots.append(slot)
        }
    }

    /// The reply: the tree and the record of reads and writes.
    func result(status: IsolationStatus, tree: [UInt8]) -> IsolationRenderResult {
        let readSlots = read.indices.filter { read[$0] }.map { UInt32($0) }
        return IsolationRenderResult(status: status, tree: tree, readSlots: readSlots, readMissing: missing, writes: writes)
    }
}
