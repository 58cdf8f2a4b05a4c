@_spi(Engine) import BerthCore
/// A registered Swift type's slot (its dense index in the registry and in every scope's
/// instance table), found by the type's identity with one multiply and, almost always, one
/// probe: a cached resolve does no SipHash and no string work.
///
/// Open addressing with linear probing over a power-of-two table kept at most half full.
/// Types are only added (a slot outlives its registrations), so nothing is ever removed.
struct TypeSlotTable {
    private struct Bucket {
        var type: ObjectIdentifier?
        var slot = 0
    }

    private var buckets = [Bucket](repeating: Bucket(), count: 8)
    private var count = 0

    /// The slot of `type`, or nil when it was never registered.
    subscript(type: ObjectIdentifier) -> Int? {
        var index = position(of: type)
        while let present = buckets[index].type {
            if present == type { return buckets[index].slot }
            index = (index + 1) & (buckets.count - 1)
        }
        return nil
    }

    mutating func insert(_ type: ObjectIdentifier, slot: Int) {
        if (count + 1) * 2 > buckets.count { grow() }
        var index = position(of: type)
        while let present = buckets[index].type, present != type { index = (index + 1) & (buckets.count - 1) }
        if buckets[index].type == nil { count += 1 }
        buckets[index] = Bucket(type: type, slot: slot)
    }

    /// Fibonacci hashing of the metadata address: its high bits pick the bucket.
    private func position(of type: ObjectIdentifier) -> Int {
        let mixed = UInt(bitPattern: type) &* 0x9E37_79B9_7F4A_7C15
        return Int(truncatingIfNeeded: mixed >> UInt(UInt.bitWidth - buckets.count.trailingZeroBitCount))
    }

    private mutating func grow() {
        let old = buckets
        buckets = [Bucket](repeating: Bucket(), count: old.count * 2)
        count = 0
        for bucket in old { if let type = bucket.type { insert(type, slot: bucket.slot) } }
    }
}
