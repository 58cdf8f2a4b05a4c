internal import CBerth

/// A view tree in berth.h's binary format (`render_tree`), checked once and kept as the
/// bytes the plugin wrote plus where its nodes start: a render pass builds no node objects.
/// `ViewNode`s are made only when someone looks (`screen`, input, tests).
struct BinaryViewTree: Sendable {
    /// One node's fixed part: kind, field bits, two zero bytes, identity, child count.
    private static let nodeHeaderSize = 12
    private static let knownKinds: ClosedRange<UInt8> = UInt8(BERTH_VIEW_VSTACK)...UInt8(BERTH_VIEW_STEPPER)
    private static let knownFields = UInt8(BERTH_VIEW_FIELD_TEXT | BERTH_VIEW_FIELD_LABEL | BERTH_VIEW_FIELD_IS_ON | BERTH_VIEW_FIELD_VALUE | BERTH_VIEW_FIELD_BRANCH)

    let bytes: [UInt8]
    /// Identity paths by id, as defined up to and including this tree.
    let paths: [String]
    let nodesStart: Int
    let nodeCount: Int
    /// The branch each `if` took, by identity path (the first node wins on a repeated id).
    let branches: [String: Bool]

    /// What the header and definitions said, before the tree is accepted.
    struct Header {
        var reset: Bool
        var definitions: [String]
        var firstDefinition: UInt32
        var alive: ArraySlice<UInt8>
        var nodesStart: Int
        var nodeCount: Int
    }

    /// Reads the header, definitions and bitmap; throws a one-line reason.
    static func header(_ bytes: [UInt8]) throws(ViewTreeError) -> Header {
        var reader = TreeReader(bytes: bytes)
        guard try reader.u32("magic") == BERTH_VIEW_TREE_MAGIC else { throw ViewTreeError("it does not start with the view-tree magic \"BVTR\"") }
        let version = try reader.u32("version")
        guard version >= 1, version <= UInt32(BERTH_VIEW_TREE_VERSION) else {
            throw ViewTreeError("view-tree version \(version) is not one this host reads (1...\(BERTH_VIEW_TREE_VERSION))")
        }
        let headerSize = Int(try reader.u32("header size"))
        guard headerSize >= 24 else { throw ViewTreeError("header size \(headerSize) is below 24") }
        let flags = try reader.u32("flags")
        let definitionCount = Int(try reader.u32("definition count"))
        let nodeCount = Int(try reader.u32("node count"))
        try reader.skip(headerSize - 24, "header")
        var definitions: [String] = []
        definitions.reserveCapacity(min(definitionCount, bytes.count / 8))
        var firstDefinition: UInt32 = 0
        for position in 0..<definitionCount {
            let id = try reader.u32("definition id")
            if position == 0 { firstDefinition = id }
            guard id == firstDefinition &+ UInt32(position) else {
                throw ViewTreeError("definition \(position) has id \(id); ids must count up from \(firstDefinition)")
            }
            definitions.append(try reader.string("definition"))
        }
        let aliveCount = Int(try reader.u32("alive length"))
        let alive = try reader.slice(aliveCount, "alive bitmap")
        return Header(reset: flags & UInt32(BERTH_VIEW_TREE_IDENTITIES_RESET) != 0, definitions: definitions,
                      firstDefinition: firstDefinition, alive: alive, nodesStart: reader.offset, nodeCount: nodeCount)
    }

    /// Checks every node against `paths` (the identities known once the header's
    /// definitions are in) and collects the branches.
    init(bytes: [UInt8], header: Header, paths: [String]) throws(ViewTreeError) {
        var reader = TreeReader(bytes: bytes, offset: header.nodesStart)
        var branches: [String: Bool] = [:]
        // Children still expected at each open level; the root level expects one node.
        var open: [Int] = [header.nodeCount > 0 ? 1 : 0]
        for index in 0..<header.nodeCount {
            while open.last == 0 { open.removeLast() }
            guard !open.isEmpty else { throw ViewTreeError("node \(index) lies outside the tree (child counts add up to fewer nodes)") }
            open[open.count - 1] -= 1
            let kind = try reader.u8("node kind")
            let fields = try reader.u8("node fields")
            try reader.skip(2, "node")
            let identity = Int(try reader.u32("node identity"))
            let children = Int(try reader.u32("child count"))
            guard Self.knownKinds.contains(kind) else { throw ViewTreeError("node \(index) has unknown kind \(kind)") }
            guard fields & ~Self.knownFields == 0 else { throw ViewTreeError("node \(index) has unknown field bits \(fields)") }
            guard identity < paths.count else { throw ViewTreeError("node \(index) names identity \(identity), which no tree defined") }
            let branch = try Self.skipFields(fields, &reader)
            if kind == UInt8(BERTH_VIEW_IF), let branch, branches[paths[identity]] == nil { branches[paths[identity]] = branch }
            if children > 0 { open.append(children) }
        }
        guard open.allSatisfy({ $0 == 0 }) else { throw ViewTreeError("the child counts announce more nodes than the tree holds") }
        guard reader.offset == bytes.count else { throw ViewTreeError("\(bytes.count - reader.offset) byte(s) follow the last node") }
        self.bytes = bytes
        self.paths = paths
        self.nodesStart = header.nodesStart
        self.nodeCount = header.nodeCount
        self.branches = branches
    }

    /// Skips a node's fields; returns its branch field.
    private static func skipFields(_ fields: UInt8, _ reader: inout TreeReader) throws(ViewTreeError) -> Bool? {
        if fields & UInt8(BERTH_VIEW_FIELD_TEXT) != 0 { try reader.skip(Int(try reader.u32("text length")), "text") }
        if fields & UInt8(BERTH_VIEW_FIELD_LABEL) != 0 { try reader.skip(Int(try reader.u32("label length")), "label") }
        if fields & UInt8(BERTH_VIEW_FIELD_IS_ON) != 0 { try reader.skip(1, "isOn") }
        if fields & UInt8(BERTH_VIEW_FIELD_VALUE) != 0 { try reader.skip(8, "value") }
        return fields & UInt8(BERTH_VIEW_FIELD_BRANCH) != 0 ? try reader.u8("branch") != 0 : nil
    }

    /// The root node, with every node below it.
    func root() -> ViewNode? {
        guard nodeCount > 0 else { return nil }
        var reader = TreeReader(bytes: bytes, offset: nodesStart)
        return try? node(&reader)
    }

    private func node(_ reader: inout TreeReader) throws(ViewTreeError) -> ViewNode {
        let kind = try reader.u8("node kind")
        let fields = try reader.u8("node fields")
        try reader.skip(2, "node")
        let identity = Int(try reader.u32("node identity"))
        let childCount = Int(try reader.u32("child count"))
        var values: [String: String] = [:]
        if fields & UInt8(BERTH_VIEW_FIELD_TEXT) != 0 { values["text"] = try reader.string("text") }
        if fields & UInt8(BERTH_VIEW_FIELD_LABEL) != 0 { values["label"] = try reader.string("label") }
        if fields & UInt8(BERTH_VIEW_FIELD_IS_ON) != 0 { values["isOn"] = try reader.u8("isOn") != 0 ? "true" : "false" }
        if fields & UInt8(BERTH_VIEW_FIELD_VALUE) != 0 { values["value"] = String(Int64(bitPattern: try reader.u64("value"))) }
        if fields & UInt8(BERTH_VIEW_FIELD_BRANCH) != 0 { values["branch"] = try reader.u8("branch") != 0 ? "true" : "false" }
        var children: [ViewNode] = []
        children.reserveCapacity(childCount)
        for _ in 0..<childCount { children.append(try node(&reader)) }
        return ViewNode(type: ViewKindName.name(kind), id: paths[identity], fields: values, children: children)
    }
}

/// The type names of the binary format's view kinds, as `ViewNode.type` and JSON show them.
enum ViewKindName {
    private static let names = ["", "VStack", "HStack", "List", "Group", "ForEach", "if", "Text", "Button", "Toggle", "TextField", "Stepper"]

    static func name(_ kind: UInt8) -> String {
        Int(kind) < names.count ? names[Int(kind)] : "kind \(kind)"
    }
}

/// Why a rendered tree was refused: one line.
struct ViewTreeError: Error {
    let reason: String
    init(_ reason: String) { self.reason = reason }
}

/// Little-endian reads over a tree's bytes, each failing with what it was reading.
private struct TreeReader {
    let bytes: [UInt8]
    var offset = 0

    mutating func u8(_ what: String) throws(ViewTreeError) -> UInt8 {
        try need(1, what)
        defer { offset += 1 }
        return bytes[offset]
    }

    mutating func u32(_ what: String) throws(ViewTreeError) -> UInt32 {
        try need(4, what)
        defer { offset += 4 }
        return UInt32(bytes[offset]) | UInt32(bytes[offset + 1]) << 8 | UInt32(bytes[offset + 2]) << 16 | UInt32(bytes[offset + 3]) << 24
    }

    mutating func u64(_ what: String) throws(ViewTreeError) -> UInt64 {
        let low = UInt64(try u32(what))
        return low | UInt64(try u32(what)) << 32
    }

    mutating func string(_ what: String) throws(ViewTreeError) -> String {
        let count = Int(try u32("\(what) length"))
        try need(count, what)
        defer { offset += count }
        return String(decoding: bytes[offset..<offset + count], as: UTF8.self)
    }

    mutating func slice(_ count: Int, _ what: String) throws(ViewTreeError) -> ArraySlice<UInt8> {
        try need(count, what)
        defer { offset += count }
        return bytes[offset..<offset + count]
    }

    mutating func skip(_ count: Int, _ what: String) throws(ViewTreeError) {
        try need(count, what)
        offset += count
    }

    private func need(_ count: Int, _ what: String) throws(ViewTreeError) {
        guard count >= 0, bytes.count - offset >= count else {
            throw ViewTreeError("it ends inside the \(what) at byte \(offset) of \(bytes.count)")
        }
    }
}
