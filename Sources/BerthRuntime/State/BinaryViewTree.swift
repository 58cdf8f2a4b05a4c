internal import CBerth

/// A view tree in berth.h's binary format (`render_tree`), checked once and kept as the
/// bytes the plugin wrote plus where its nodes start: a render pass builds no node objects.
/// `ViewNode`s are made only when someone looks (`screen`, input, tests).
struct BinaryViewTree: Sendable {
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
        let checked = bytes.withUnsafeBytes { Self.checkNodes(NodeReader(bytes: $0, offset: header.nodesStart), count: header.nodeCount, paths: paths) }
        self.bytes = bytes
        self.paths = paths
        self.nodesStart = header.nodesStart
        self.nodeCount = header.nodeCount
        self.branches = try checked.get()
    }

    /// The check of every node, over the tree's bytes in place: the render pass's hot loop
    /// (10,000 nodes in P5), so each node's fixed part is read with one bounds check.
    private static func checkNodes(_ reader: NodeReader, count nodeCount: Int, paths: [String]) -> Result<[String: Bool], ViewTreeError> {
        var reader = reader
        var branches: [String: Bool] = [:]
        // Children still expected at each open level; the root level expects one node.
        var open: [Int] = [nodeCount > 0 ? 1 : 0]
        do throws(ViewTreeError) {
            for index in 0..<nodeCount {
                while let last = open.last, last == 0 { open.removeLast() }
                guard !open.isEmpty else { throw ViewTreeError("node \(index) lies outside the tree (child counts add up to fewer nodes)") }
                open[open.count - 1] -= 1
                let node = try reader.nodeHeader()
                guard Self.knownKinds.contains(node.kind) else { throw ViewTreeError("node \(index) has unknown kind \(node.kind)") }
                guard node.fields & ~Self.knownFields == 0 else { throw ViewTreeError("node \(index) has unknown field bits \(node.fields)") }
                guard node.identity < paths.count else { throw ViewTreeError("node \(index) names identity \(node.identity), which no tree defined") }
                let branch = try reader.skipFields(node.fields)
                if node.kind == UInt8(BERTH_VIEW_IF), let branch, branches[paths[node.identity]] == nil { branches[paths[node.identity]] = branch }
                if node.children > 0 { open.append(node.children) }
            }
            guard open.allSatisfy({ $0 == 0 }) else { throw ViewTreeError("the child counts announce more nodes than the tree holds") }
            guard reader.offset == reader.bytes.count else { throw ViewTreeError("\(reader.bytes.count - reader.offset) byte(s) follow the last node") }
        } catch {
            return .failure(error)
        }
        return .success(branches)
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

/// The node check's reads, over the bytes in place. A node's fixed part (kind, field bits,
/// two zero bytes, identity, child count) takes one bounds check; a failure names the field
/// the tree ends inside, as `TreeReader` does.
private struct NodeReader {
    let bytes: UnsafeRawBufferPointer
    var offset: Int

    struct NodeHeader {
        var kind: UInt8
        var fields: UInt8
        var identity: Int
        var children: Int
    }

    @inline(__always)
    mutating func nodeHeader() throws(ViewTreeError) -> NodeHeader {
        guard bytes.count - offset >= 12 else { throw endsInsideNodeHeader() }
        let word = UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt32.self))
        let identity = UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: offset + 4, as: UInt32.self))
        let children = UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: offset + 8, as: UInt32.self))
        offset += 12
        return NodeHeader(kind: UInt8(truncatingIfNeeded: word), fields: UInt8(truncatingIfNeeded: word >> 8),
                          identity: Int(identity), children: Int(children))
    }

    /// Skips a node's fields; returns its branch field.
    @inline(__always)
    mutating func skipFields(_ fields: UInt8) throws(ViewTreeError) -> Bool? {
        if fields & UInt8(BERTH_VIEW_FIELD_TEXT) != 0 { try skip(Int(try u32("text length")), "text") }
        if fields & UInt8(BERTH_VIEW_FIELD_LABEL) != 0 { try skip(Int(try u32("label length")), "label") }
        if fields & UInt8(BERTH_VIEW_FIELD_IS_ON) != 0 { try skip(1, "isOn") }
        if fields & UInt8(BERTH_VIEW_FIELD_VALUE) != 0 { try skip(8, "value") }
        guard fields & UInt8(BERTH_VIEW_FIELD_BRANCH) != 0 else { return nil }
        guard offset < bytes.count else { throw endsInside("branch") }
        defer { offset += 1 }
        return bytes[offset] != 0
    }

    @inline(__always)
    private mutating func u32(_ what: StaticString) throws(ViewTreeError) -> UInt32 {
        guard bytes.count - offset >= 4 else { throw endsInside(what) }
        defer { offset += 4 }
        return UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt32.self))
    }

    @inline(__always)
    private mutating func skip(_ count: Int, _ what: StaticString) throws(ViewTreeError) {
        guard bytes.count - offset >= count else { throw endsInside(what) }
        offset += count
    }

    @inline(never)
    private func endsInside(_ what: StaticString) -> ViewTreeError {
        ViewTreeError("it ends inside the \(what) at byte \(offset) of \(bytes.count)")
    }

    /// The field of the fixed part the bytes end inside.
    @inline(never)
    private func endsInsideNodeHeader() -> ViewTreeError {
        let left = bytes.count - offset
        return endsInside(left < 1 ? "node kind" : left < 2 ? "node fields" : left < 4 ? "node" : left < 8 ? "node identity" : "child count")
    }
}
