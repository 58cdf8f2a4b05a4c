/// What one render round trip returns: the tree, which slots the render read (so the
/// host's render-pass GC keeps them) and the writes it made (the host stores them).
package struct IsolationRenderResult: Sendable, Equatable {
    /// The plugin's render status and message.
    package var status: IsolationStatus
    /// The view tree the plugin wrote: binary from `render_tree`, UTF-8 JSON from the v1.0
    /// `render` (Docs/view-tree-format.md).
    package var tree: [UInt8]
    /// Indices into the request's `slots` of every slot the render read, ascending.
    package var readSlots: [UInt32]
    /// Keys read that were not in the request's slots (read as empty), in first-read order.
    package var readMissing: [IsolationSlotKey]
    /// Every `state_write` of the render, in order (a later write of a key wins).
    package var writes: [IsolationStateSlot]

    /// A result; a failed render carries only its status (and the reads made before it failed).
    package init(status: IsolationStatus, tree: [UInt8] = [], readSlots: [UInt32] = [], readMissing: [IsolationSlotKey] = [],
                writes: [IsolationStateSlot] = []) {
        self.status = status
        self.tree = tree
        self.readSlots = readSlots
        self.readMissing = readMissing
        self.writes = writes
    }

    package func write(to writer: inout WireWriter) {
        status.write(to: &writer)
        writer.data(tree)
        writer.list(readSlots) { $0.u32($1) }
        writer.list(readMissing) { $1.write(to: &$0) }
        writer.list(writes) { $1.write(to: &$0) }
    }

    package static func read(from reader: inout WireReader) throws(WireDecodingError) -> IsolationRenderResult {
        let status = try IsolationStatus.read(from: &reader)
        let tree = try reader.data()
        let readSlots = try reader.list(minimumElementSize: 4) { reader throws(WireDecodingError) in try reader.u32() }
        let readMissing = try reader.list(minimumElementSize: 8) { reader throws(WireDecodingError) in try IsolationSlotKey.read(from: &reader) }
        let writes = try reader.list(minimumElementSize: IsolationStateSlot.minimumWireSize) { reader throws(WireDecodingError) in
            try IsolationStateSlot.read(from: &reader)
        }
        return IsolationRenderResult(status: status, tree: tree, readSlots: readSlots, readMissing: readMissing, writes: writes)
    }
}
