/// A render pass through `render_tree`: the slots go out in one batch, named by the
/// identity ids the plugin's trees defined; the tree comes back with the bitmap of slots
/// the pass used, and the rest are dropped (the render-pass GC).
extension StateStorage {
    /// Every slot, for the plugin; remembers their order for `endRenderPass(with:)`.
    func renderSlots() -> [RenderSlot] {
        var batch: [RenderSlot] = []
        batch.reserveCapacity(slots.count)
        var keys: [Key] = []
        keys.reserveCapacity(slots.count)
        for (key, slot) in slots {
            keys.append(key)
            let id = identityIDs[key.identity]
            batch.append(RenderSlot(identityID: id ?? RenderSlot.unknownIdentity, identity: id == nil ? key.identity : nil,
                                    index: key.index, fingerprint: slot.fingerprint, bytes: slot.bytes))
        }
        batchKeys = keys
        return batch
    }

    /// Ends the pass with the tree the plugin wrote: a binary tree's new identities are
    /// taken in and the batch slots it did not use are dropped; a JSON tree (v1.0 `render`)
    /// keeps the slots its `state_read` calls marked. Throws, dropping nothing, when the
    /// tree is not valid.
    func endRenderPass(with output: RenderedTree) throws(ViewTreeError) -> ViewTree? {
        switch output {
        case .json(let bytes):
            let root = try LegacyJSONTree.parse(bytes)
            endRenderPass()
            return root.map(ViewTree.init(root:))
        case .binary(let bytes):
            guard !bytes.isEmpty else {
                endRenderPass(alive: [])
                return nil
            }
            let header = try BinaryViewTree.header(bytes)
            let paths = try identityPaths(definedBy: header)
            let tree = try BinaryViewTree(bytes: bytes, header: header, paths: paths)
            takeDefinitions(of: header, paths: paths)
            endRenderPass(alive: header.alive)
            return tree.nodeCount > 0 ? ViewTree(binary: tree) : nil
        }
    }

    /// Takes in the identities a binary tree defines without using the tree or collecting
    /// (a render made ahead of an action's refresh that the host did not use): the plugin
    /// has sent them, and its next tree names them by number.
    func takeDefinitions(of bytes: [UInt8]) throws(ViewTreeError) {
        guard !bytes.isEmpty else { return }
        let header = try BinaryViewTree.header(bytes)
        takeDefinitions(of: header, paths: try identityPaths(definedBy: header))
    }

    private func identityPaths(definedBy header: BinaryViewTree.Header) throws(ViewTreeError) -> [String] {
        var paths = header.reset ? [] : identityPaths
        guard header.definitions.isEmpty || Int(header.firstDefinition) == paths.count else {
            throw ViewTreeError("its first new identity is \(header.firstDefinition), but \(paths.count) are defined")
        }
        paths.append(contentsOf: header.definitions)
        return paths
    }

    private func takeDefinitions(of header: BinaryViewTree.Header, paths: [String]) {
        if header.reset { identityIDs.removeAll(keepingCapacity: true) }
        // Sized once: a screen's first tree defines all its identities, which grew the
        // table from empty one doubling at a time (P7 in Docs/benchmarks.md).
        identityIDs.reserveCapacity(identityIDs.count + header.definitions.count)
        for (offset, path) in header.definitions.enumerated() {
            identityIDs[path] = header.firstDefinition + UInt32(offset)
        }
        identityPaths = paths
    }

    /// Drops every batch slot whose bit in `alive` is clear, unless a `state_read` or
    /// `state_write` during the pass marked it.
    @discardableResult
    func endRenderPass(alive: ArraySlice<UInt8>) -> [Key] {
        let marked = takeMarks()
        var dropped: [Key] = []
        for (position, key) in batchKeys.enumerated() {
            let byte = alive.startIndex + position >> 3
            let used = byte < alive.endIndex && alive[byte] & (1 << UInt8(position & 7)) != 0
            guard !used, !marked.contains(key) else { continue }
            put(key, nil)
            dropped.append(key)
        }
        batchKeys.removeAll(keepingCapacity: true)
        return dropped.sorted()
    }
}

/// A render pass's result, as the plugin wrote it.
package enum RenderedTree: Sendable {
    /// berth.h's binary view tree, from `render_tree`.
    case binary([UInt8])
    /// UTF-8 JSON, from a v1.0 `render`.
    case json([UInt8])
}
