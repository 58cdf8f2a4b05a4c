@_spi(Engine) import BerthCore
internal import CBerth

/// A view tree in berth.h's binary format (`render_tree`), checked once and kept as the
/// bytes the plugin wrote plus where its nodes start: a render pass builds no node objects.
/// `ViewNode`s are made only when someone looks (`screen`, input, tests).
struct BinaryViewTree: Sendable {
    private static let knownKinds: ClosedRange<UInt8> = UInt8(BERTH_VIEW_VSTACK)...UInt8(BERTH_VIEW_PICKER)
    private static let knownFields = UInt8(BERTH_VIEW_FIELD_TEXT | BERTH_VIEW_FIELD_LABEL | BERTH_VIEW_FIELD_IS_ON | BERTH_VIEW_FIELD_VALUE
        | BERTH_VIEW_FIELD_BRANCH | BERTH_VIEW_FIELD_STYLE | BERTH_VIEW_FIELD_TITLE)

    let bytes: [UInt8]
    /// Identity paths by id, as defined up to and including this tree.
    let paths: [String]
    let nodesStart: Int
    let nodeCount: Int
    /// The branch each `if` took, by identity path (the first node wins on a repeated id).
    let branches: [String: Bool]
    /// The first `title` field in pre-order (the screen's title), found by the check.
    let title: String?

    /// What the header and definitions said, before the tree is accepted.
    struct Header {
        var reset: Bool
        var definitions: [String]
        var firstDefinition: UInt32
        /// The bitmap of identities alive, by id; `aliveRange` is where it lies in the bytes.
        var alive: ArraySlice<UInt8> = []
        var aliveRange: Range<Int>
        var nodesStart: Int
        var nodeCount: Int
    }

    /// Reads the header, definitions and bitmap; throws a one-line reason.
    static func header(_ bytes: [UInt8]) throws(ViewTreeError) -> Header {
        try RenderLimits.checkSize(bytes)
        let read = bytes.withUnsafeBytes { buffer in Result { () throws(ViewTreeError) in try readHeader(TreeReader(bytes: buffer, offset: 0)) } }
        var header = try read.get()
        header.alive = bytes[header.aliveRange]
        return header
    }

    private static func readHeader(_ reader: TreeReader) throws(ViewTreeError) -> Header {
        var reader = reader
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
        guard nodeCount <= RenderLimits.maximumNodes else { throw RenderLimits.nodesError(nodeCount) }
        guard definitionCount <= RenderLimits.maximumNodes else {
            throw ViewTreeError("the tree defines \(definitionCount) identities, over the limit of \(RenderLimits.maximumNodes)")
        }
        try reader.skip(headerSize - 24, "header")
        var definitions: [String] = []
        definitions.reserveCapacity(min(definitionCount, reader.bytes.count / 8))
        var firstDefinition: UInt32 = 0
        for position in 0..<definitionCount {
            let id = try reader.u32("definition id")
            if position == 0 { firstDefinition = id }
            guard id == firstDefinition &+ UInt32(position) else {
                throw ViewTreeError("definition \(position) has id \(id); ids must count up from \(firstDefinition)")
            }
            definitions.append(try reader.string("definition", length: "definition length"))
        }
        let aliveCount = Int(try reader.u32("alive length"))
        let aliveStart = reader.offset
        try reader.skip(aliveCount, "alive bitmap")
        return Header(reset: flags & UInt32(BERTH_VIEW_TREE_IDENTITIES_RESET) != 0, definitions: definitions,
                      firstDefinition: firstDefinition, aliveRange: aliveStart..<reader.offset, nodesStart: reader.offset, nodeCount: nodeCount)
    }

    /// Checks every node against `paths` (the identities known once the header's
    /// definitions are in) and collects the branches.
    init(bytes: [UInt8], header: Header, paths: [String]) throws(ViewTreeError) {
        let checked = bytes.withUnsafeBytes { Self.checkNodes(TreeReader(bytes: $0, offset: header.nodesStart), count: header.nodeCount, paths: paths) }
        self.bytes = bytes
        self.paths = paths
        self.nodesStart = header.nodesStart
        self.nodeCount = header.nodeCount
        (self.branches, self.title) = try checked.get()
    }

    /// The check of every node, over the tree's bytes in place: the render pass's hot loop
    /// (10,000 nodes in P5), so each node's fixed part is read with one bounds check.
    private static func checkNodes(_ reader: TreeReader, count nodeCount: Int, paths: [String]) -> Result<([String: Bool], String?), ViewTreeError> {
        var reader = reader
        var branches: [String: Bool] = [:]
        var title: String?
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
                if title == nil, node.fields & UInt8(BERTH_VIEW_FIELD_TITLE) != 0 {
                    var titleReader = reader
                    title = try? titleReader.title(after: node.fields)
                }
                let branch = try reader.skipFields(node.fields)
                if node.kind == UInt8(BERTH_VIEW_IF), let branch, branches[paths[node.identity]] == nil { branches[paths[node.identity]] = branch }
                if node.children > 0 { open.append(node.children) }
            }
            guard open.allSatisfy({ $0 == 0 }) else { throw ViewTreeError("the child counts announce more nodes than the tree holds") }
            guard reader.offset == reader.bytes.count else { throw ViewTreeError("\(reader.bytes.count - reader.offset) byte(s) follow the last node") }
        } catch {
            return .failure(error)
        }
        return .success((branches, title))
    }

    /// The root node, with every node below it.
    func root() -> ViewNode? {
        guard nodeCount > 0 else { return nil }
        return bytes.withUnsafeBytes { buffer in
            var reader = TreeReader(bytes: buffer, offset: nodesStart)
            return try? node(&reader)
        }
    }

    private func node(_ reader: inout TreeReader) throws(ViewTreeError) -> ViewNode {
        let node = try reader.nodeHeader()
        var values: [String: String] = [:]
        if node.fields & UInt8(BERTH_VIEW_FIELD_TEXT) != 0 { values["text"] = try reader.string("text", length: "text length") }
        if node.fields & UInt8(BERTH_VIEW_FIELD_LABEL) != 0 { values["label"] = try reader.string("label", length: "label length") }
        if node.fields & UInt8(BERTH_VIEW_FIELD_IS_ON) != 0 { values["isOn"] = try reader.u8("isOn") != 0 ? "true" : "false" }
        if node.fields & UInt8(BERTH_VIEW_FIELD_VALUE) != 0 { values["value"] = String(Int64(bitPattern: try reader.u64("value"))) }
        if node.fields & UInt8(BERTH_VIEW_FIELD_BRANCH) != 0 { values["branch"] = try reader.u8("branch") != 0 ? "true" : "false" }
        if node.fields & UInt8(BERTH_VIEW_FIELD_STYLE) != 0 { ViewStyleFields.add(word: try reader.u32("style"), to: &values) }
        if node.fields & UInt8(BERTH_VIEW_FIELD_TITLE) != 0 { values["title"] = try reader.string("title", length: "title length") }
        var children: [ViewNode] = []
        children.reserveCapacity(node.children)
        for _ in 0..<node.children { children.append(try self.node(&reader)) }
        return ViewNode(type: ViewKindName.name(node.kind), id: paths[node.identity], fields: values, children: children)
    }
}

/// The type names of the binary format's view kinds, as `ViewNode.type` and JSON show them.
enum ViewKindName {
    private static let names = ["", "VStack", "HStack", "List", "Group", "ForEach", "if", "Text", "Button", "Toggle", "TextField", "Stepper",
                                "Spacer", "Divider", "Picker"]

    static func name(_ kind: UInt8) -> String {
        Int(kind) < names.count ? names[Int(kind)] : "kind \(kind)"
    }
}

/// Why a rendered tree was refused: one line.
struct ViewTreeError: Error {
    /// One line naming the field or byte at fault.
    let message: String
    init(_ message: String) { self.message = message }
}

/// Little-endian reads over a tree's bytes, in place, each failing with the field it ends
/// inside. A node's fixed part (kind, field bits, two zero bytes, identity, child count)
/// takes one bounds check: the node check is the render pass's hot loop.
private struct TreeReader {
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
        var branch: Bool?
        if fields & UInt8(BERTH_VIEW_FIELD_BRANCH) != 0 { branch = try u8("branch") != 0 }
        if fields & UInt8(BERTH_VIEW_FIELD_STYLE) != 0 { try skip(4, "style") }
        if fields & UInt8(BERTH_VIEW_FIELD_TITLE) != 0 { try skip(Int(try u32("title length")), "title") }
        return branch
    }

    /// The title field of a node whose other fields start here (the title is the last field).
    mutating func title(after fields: UInt8) throws(ViewTreeError) -> String {
        _ = try skipFields(fields & ~UInt8(BERTH_VIEW_FIELD_TITLE))
        return try string("title", length: "title length")
    }

    @inline(__always)
    mutating func u8(_ what: StaticString) throws(ViewTreeError) -> UInt8 {
        guard offset < bytes.count else { throw endsInside(what) }
        defer { offset += 1 }
        return bytes[offset]
    }

    @inline(__always)
    mutating func u32(_ what: StaticString) throws(ViewTreeError) -> UInt32 {
        guard bytes.count - offset >= 4 else { throw endsInside(what) }
        defer { offset += 4 }
        return UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt32.self))
    }

    mutating func u64(_ what: StaticString) throws(ViewTreeError) -> UInt64 {
        guard bytes.count - offset >= 8 else { throw endsInside(what) }
        defer { offset += 8 }
        return UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self))
    }

    /// A length-prefixed UTF-8 string.
    mutating func string(_ what: StaticString, length: StaticString) throws(ViewTreeError) -> String {
        let count = Int(try u32(length))
        guard count <= RenderLimits.maximumStringBytes else { throw RenderLimits.stringError("\(what)", count) }
        guard bytes.count - offset >= count else { throw endsInside(what) }
        defer { offset += count }
        return String(decoding: UnsafeRawBufferPointer(rebasing: bytes[offset..<offset + count]), as: UTF8.self)
    }

    @inline(__always)
    mutating func skip(_ count: Int, _ what: StaticString) throws(ViewTreeError) {
        guard count >= 0, bytes.count - offset >= count else { throw endsInside(what) }
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
