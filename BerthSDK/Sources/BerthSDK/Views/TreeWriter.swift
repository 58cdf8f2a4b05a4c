internal import CBerth

/// Writes a view tree in the binary format of berth.h (`BERTH_VIEW_TREE_VERSION`): the
/// nodes as they are rendered, then a header with the new identity definitions and the
/// bitmap of used state slots in front of them.
struct TreeWriter {
    private(set) var nodes: [UInt8] = []
    private(set) var nodeCount = 0

    init() {
        nodes.reserveCapacity(4_096)
    }

    /// A node without its children; returns where its child count goes (see `setChildCount`).
    mutating func node(_ kind: ViewKind, identity: UInt32, text: String? = nil, label: String? = nil,
                       isOn: Bool? = nil, value: Int? = nil, branch: Bool? = nil) -> Int {
        var fields: UInt8 = 0
        if text != nil { fields |= UInt8(BERTH_VIEW_FIELD_TEXT) }
        if label != nil { fields |= UInt8(BERTH_VIEW_FIELD_LABEL) }
        if isOn != nil { fields |= UInt8(BERTH_VIEW_FIELD_IS_ON) }
        if value != nil { fields |= UInt8(BERTH_VIEW_FIELD_VALUE) }
        if branch != nil { fields |= UInt8(BERTH_VIEW_FIELD_BRANCH) }
        nodes.append(kind.rawValue)
        nodes.append(fields)
        nodes.append(0)
        nodes.append(0)
        u32(identity)
        let childCount = nodes.count
        u32(0)
        if let text { string(text) }
        if let label { string(label) }
        if let isOn { nodes.append(isOn ? 1 : 0) }
        if let value { withUnsafeBytes(of: Int64(value).littleEndian) { nodes.append(contentsOf: $0) } }
        if let branch { nodes.append(branch ? 1 : 0) }
        nodeCount += 1
        return childCount
    }

    mutating func setChildCount(at position: Int, _ count: Int) {
        withUnsafeBytes(of: UInt32(count).littleEndian) { bytes in
            for offset in 0..<4 { nodes[position + offset] = bytes[offset] }
        }
    }

    /// Everything in front of the nodes: the header, the definitions (ids from `firstID`)
    /// and the used-slots bitmap.
    func prefix(definitions: ArraySlice<String>, firstID: Int, reset: Bool, alive: [UInt8]) -> [UInt8] {
        var out = Self()
        out.nodes.reserveCapacity(28 + alive.count + definitions.reduce(0) { $0 + 8 + $1.utf8.count })
        out.u32(BERTH_VIEW_TREE_MAGIC)
        out.u32(UInt32(BERTH_VIEW_TREE_VERSION))
        out.u32(24)
        out.u32(reset ? UInt32(BERTH_VIEW_TREE_IDENTITIES_RESET) : 0)
        out.u32(UInt32(definitions.count))
        out.u32(UInt32(nodeCount))
        for (offset, path) in definitions.enumerated() {
            out.u32(UInt32(firstID + offset))
            out.string(path)
        }
        out.u32(UInt32(alive.count))
        out.nodes.append(contentsOf: alive)
        return out.nodes
    }

    private mutating func u32(_ value: UInt32) {
        withUnsafeBytes(of: value.littleEndian) { nodes.append(contentsOf: $0) }
    }

    private mutating func string(_ text: String) {
        var text = text
        text.withUTF8 { utf8 in
            u32(UInt32(utf8.count))
            nodes.append(contentsOf: utf8)
        }
    }
}

/// The view kinds of the binary format (`BERTH_VIEW_*`).
@usableFromInline
enum ViewKind: UInt8 {
    case vStack = 1, hStack, list, group, forEach, conditional, text, button, toggle, textField, stepper
}
