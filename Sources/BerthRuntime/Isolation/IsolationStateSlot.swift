/// The key of a state slot below a screen: the view's structural identity and the
/// property index (what `state_read` and `state_write` name).
public struct IsolationSlotKey: Sendable, Hashable {
    public var identity: String
    public var index: UInt32

    public init(identity: String, index: UInt32) {
        self.identity = identity
        self.index = index
    }

    func write(to writer: inout WireWriter) {
        writer.string(identity)
        writer.u32(index)
    }

    static func read(from reader: inout WireReader) throws(WireDecodingError) -> IsolationSlotKey {
        IsolationSlotKey(identity: try reader.string(), index: try reader.u32())
    }
}

/// One state slot with its value: sent with a render request (the screen's slots) and
/// returned with its reply (the writes the render made), and in `state_write`.
public struct IsolationStateSlot: Sendable, Equatable {
    public var key: IsolationSlotKey
    /// The value's type fingerprint; a read with another fingerprint finds nothing.
    public var fingerprint: UInt64
    public var bytes: [UInt8]

    public init(identity: String, index: UInt32, fingerprint: UInt64, bytes: [UInt8]) {
        self.key = IsolationSlotKey(identity: identity, index: index)
        self.fingerprint = fingerprint
        self.bytes = bytes
    }

    func write(to writer: inout WireWriter) {
        key.write(to: &writer)
        writer.u64(fingerprint)
        writer.data(bytes)
    }

    static func read(from reader: inout WireReader) throws(WireDecodingError) -> IsolationStateSlot {
        let key = try IsolationSlotKey.read(from: &reader)
        return IsolationStateSlot(identity: key.identity, index: key.index, fingerprint: try reader.u64(), bytes: try reader.data())
    }

    /// Smallest encoded size (empty identity and bytes), to bound list counts.
    static let minimumWireSize = 4 + 4 + 8 + 4
}

/// What one render round trip returns: the tree, which slots the render read (so the
/// host's render-pass GC keeps them) and the writes it made (the host stores them).
public struct IsolationRenderResult: Sendable, Equatable {
    public var status: IsolationStatus
    /// The view tree the plugin wrote (UTF-8 JSON, Docs/state.md).
    public var tree: [UInt8]
    /// Indices into the request's `slots` of every slot the render read, ascending.
    public var readSlots: [UInt32]
    /// Keys read that were not in the request's slots (read as empty), in first-read order.
    public var readMissing: [IsolationSlotKey]
    /// Every `state_write` of the render, in order (a later write of a key wins).
    public var writes: [IsolationStateSlot]

    public init(status: IsolationStatus, tree: [UInt8] = [], readSlots: [UInt32] = [], readMissing: [IsolationSlotKey] = [],
                writes: [IsolationStateSlot] = []) {
        self.status = status
        self.tree = tree
        self.readSlots = readSlots
        self.readMissing = readMissing
        self.writes = writes
    }

    func write(to writer: inout WireWriter) {
        status.write(to: &writer)
        writer.data(tree)
        writer.list(readSlots) { $0.u32($1) }
        writer.list(readMissing) { $1.write(to: &$0) }
        writer.list(writes) { $1.write(to: &$0) }
    }

    static func read(from reader: inout WireReader) throws(WireDecodingError) -> IsolationRenderResult {
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
