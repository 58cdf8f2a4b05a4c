@_spi(Engine) import BerthCore
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
        try commit(Self.check(output, identityPaths: identityPaths))
    }

    /// Decodes and limit-checks a render's output against the identities defined so far:
    /// the costly part of a pass, on any thread (a plugin's lane), touching no storage.
    nonisolated static func check(_ output: RenderedTree, identityPaths: [String]) throws(ViewTreeError) -> CheckedRender {
        switch output {
        case .json(let bytes):
            return CheckedRender(output: output, basePaths: identityPaths, kind: .json(try LegacyJSONTree.parse(bytes).map(ViewTree.init(root:))))
        case .binary(let bytes):
            guard !bytes.isEmpty else { return CheckedRender(output: output, basePaths: identityPaths, kind: .empty) }
            let header = try BinaryViewTree.header(bytes)
            let paths = try Self.paths(definedBy: header, after: identityPaths)
            let tree = try BinaryViewTree(bytes: bytes, header: header, paths: paths)
            return CheckedRender(output: output, basePaths: identityPaths, kind: .binary(header, paths: paths, tree: tree))
        }
    }

    /// `check`, its failure kept for the commit (on the lane: the main actor throws it).
    nonisolated static func checked(_ output: RenderedTree, identityPaths: [String]) -> CheckedRender {
        do {
            return try check(output, identityPaths: identityPaths)
        } catch {
            return CheckedRender(output: output, basePaths: identityPaths, kind: .invalid(error))
        }
    }

    /// Ends the pass with a checked tree (on the main actor: only the cheap part). Checked
    /// again first when the identities it was checked against have changed since.
    func commit(_ checked: CheckedRender) throws(ViewTreeError) -> ViewTree? {
        // Equal buffers compare at once: the usual case, nothing rendered in between.
        guard checked.basePaths == identityPaths else {
            return try commit(Self.check(checked.output, identityPaths: identityPaths))
        }
        switch checked.kind {
        case .invalid(let error):
            throw error
        case .json(let tree):
            endRenderPass()
            return tree
        case .empty:
            endRenderPass(alive: [])
            return nil
        case .binary(let header, let paths, let tree):
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
        takeDefinitions(of: header, paths: try Self.paths(definedBy: header, after: identityPaths))
    }

    private nonisolated static func paths(definedBy header: BinaryViewTree.Header, after identityPaths: [String]) throws(ViewTreeError) -> [String] {
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

/// A render's output decoded and limit-checked off the main actor, for
/// `StateStorage.commit(_:)` on it.
///
/// A class: it is handed from the lane to the main actor and kept for the next render, and
/// a struct of these payloads costs a copy of every one at each step.
package final class CheckedRender: Sendable {
    enum Kind: Sendable {
        /// Not a valid tree: the commit throws this.
        case invalid(ViewTreeError)
        /// A JSON tree, parsed and summed up where it was checked.
        case json(ViewTree?)
        case empty
        case binary(BinaryViewTree.Header, paths: [String], tree: BinaryViewTree)
    }
    /// What the plugin wrote (checked again when the identities changed before the commit).
    let output: RenderedTree
    /// The identity paths it was checked against.
    let basePaths: [String]
    let kind: Kind

    init(output: RenderedTree, basePaths: [String], kind: Kind) {
        self.output = output
        self.basePaths = basePaths
        self.kind = kind
    }
}
