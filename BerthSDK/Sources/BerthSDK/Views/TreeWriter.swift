internal import CBerth

/// Writes a view tree in the binary format of berth.h (`BERTH_VIEW_TREE_VERSION`): the
/// nodes as they are rendered, then a header with the new identity definitions and the
/// bitmap of used state slots in front of them.
struct TreeWriter {
    /// The bytes written so far.
    let bytes: ByteBuffer
    private(set) var nodeCount = 0

    init(capacity: Int = 4_096) {
        bytes = ByteBuffer(capacity: capacity)
    }

    /// A node without its children; returns where its child count goes (see `setChildCount`).
    /// `style` and `title` are version-2 fields: the caller passes them only to a host that reads version 2.
    mutating func node(_ kind: ViewKind, identity: UInt32, text: String? = nil, label: String? = nil,
                       isOn: Bool? = nil, value: Int? = nil, branch: Bool? = nil, style: UInt32? = nil, title: String? = nil) -> Int {
        var fields: UInt8 = 0
        if text != nil { fields |= UInt8(BERTH_VIEW_FIELD_TEXT) }
        if label != nil { fields |= UInt8(BERTH_VIEW_FIELD_LABEL) }
        if isOn != nil { fields |= UInt8(BERTH_VIEW_FIELD_IS_ON) }
        if value != nil { fields |= UInt8(BERTH_VIEW_FIELD_VALUE) }
        if branch != nil { fields |= UInt8(BERTH_VIEW_FIELD_BRANCH) }
        if style != nil { fields |= UInt8(BERTH_VIEW_FIELD_STYLE) }
        if title != nil { fields |= UInt8(BERTH_VIEW_FIELD_TITLE) }
        // kind, fields, two reserved bytes, identity, child count.
        let header = bytes.append(12)
        header.storeBytes(of: (UInt32(kind.rawValue) | UInt32(fields) << 8).littleEndian, as: UInt32.self)
        header.storeBytes(of: identity.littleEndian, toByteOffset: 4, as: UInt32.self)
        header.storeBytes(of: 0, toByteOffset: 8, as: UInt32.self)
        let childCount = bytes.count - 4
        if let text { string(text) }
        if let label { string(label) }
        if let isOn { byte(isOn ? 1 : 0) }
        if let value { bytes.append(8).storeBytes(of: Int64(value).littleEndian, as: Int64.self) }
        if let branch { byte(branch ? 1 : 0) }
        if let style { u32(style) }
        if let title { string(title) }
        nodeCount += 1
        return childCount
    }

    func setChildCount(at position: Int, _ count: Int) {
        bytes.store(UInt32(count), at: position)
    }

    /// Everything in front of the nodes: the header, the definitions (ids from `firstID`)
    /// and the used-slots bitmap.
    func prefix(version: UInt32, definitions: ArraySlice<String>, firstID: Int, reset: Bool, alive: [UInt8]) -> ByteBuffer {
        var out = Self(capacity: 28 + alive.count + definitions.reduce(0) { $0 + 8 + $1.utf8.count })
        out.u32(BERTH_VIEW_TREE_MAGIC)
        out.u32(version)
        out.u32(24)
        out.u32(reset ? UInt32(BERTH_VIEW_TREE_IDENTITIES_RESET) : 0)
        out.u32(UInt32(definitions.count))
        out.u32(UInt32(nodeCount))
        for (offset, path) in definitions.enumerated() {
            out.u32(UInt32(firstID + offset))
            out.string(path)
        }
        out.u32(UInt32(alive.count))
        alive.withUnsafeBytes { out.bytes.append($0) }
        return out.bytes
    }

    private mutating func u32(_ value: UInt32) {
        bytes.append(4).storeBytes(of: value.littleEndian, as: UInt32.self)
    }

    private mutating func byte(_ value: UInt8) {
        bytes.append(1).storeBytes(of: value, as: UInt8.self)
    }

    private mutating func string(_ text: String) {
        var text = text
        text.withUTF8 { utf8 in
            u32(UInt32(utf8.count))
            bytes.append(UnsafeRawBufferPointer(utf8))
        }
    }
}

/// A growable run of bytes written in place: a render writes a few bytes at a time, tens of
/// thousands of times, and an array's per-append checks and copies cost more than the bytes.
final class ByteBuffer {
    private var base: UnsafeMutableRawPointer
    private var capacity: Int
    private(set) var count = 0

    init(capacity: Int) {
        self.capacity = max(capacity, 16)
        base = .allocate(byteCount: self.capacity, alignment: 8)
    }

    deinit { base.deallocate() }

    /// The bytes written, valid while this buffer lives and is not written to.
    var written: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: base, count: count) }

    /// Room for `length` more bytes at the end; returns where they start (valid until the
    /// next append).
    func append(_ length: Int) -> UnsafeMutableRawPointer {
        if count + length > capacity { grow(to: count + length) }
        let start = base + count
        count += length
        return start
    }

    func append(_ source: UnsafeRawBufferPointer) {
        guard let from = source.baseAddress, !source.isEmpty else { return }
        append(source.count).copyMemory(from: from, byteCount: source.count)
    }

    /// Overwrites the four bytes at `position` with `value`, little-endian.
    func store(_ value: UInt32, at position: Int) {
        precondition(position >= 0 && position + 4 <= count)
        (base + position).storeBytes(of: value.littleEndian, as: UInt32.self)
    }

    private func grow(to needed: Int) {
        capacity = max(needed, capacity * 2)
        let grown = UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: 8)
        grown.copyMemory(from: base, byteCount: count)
        base.deallocate()
        base = grown
    }
}

/// The view kinds of the binary format (`BERTH_VIEW_*`).
@usableFromInline
enum ViewKind: UInt8 {
    case vStack = 1, hStack, list, group, forEach, conditional, text, button, toggle, textField, stepper
    /// Version 2.
    case spacer, divider, picker
}
