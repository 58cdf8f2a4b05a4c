/// The host-owned state of one module instance: every `@State` slot of its views, keyed
/// by (identity path, property index), holding bytes and a type fingerprint.
///
/// Render-pass GC: between `beginRenderPass` and `endRenderPass` every slot that is read
/// or written is marked; the end drops the slots of views that were not rendered.
/// Releasing the module instance drops everything (reopen-reset).
@MainActor
public final class StateStorage {
    public struct Key: Hashable, Sendable, Comparable {
        public let identity: String
        public let index: UInt32

        public static func < (lhs: Key, rhs: Key) -> Bool {
            (lhs.identity, lhs.index) < (rhs.identity, rhs.index)
        }
    }

    public struct Slot: Sendable, Equatable {
        public var fingerprint: UInt64
        public var bytes: [UInt8]
    }

    public internal(set) var slots: [Key: Slot] = [:] {
        didSet { version &+= 1 }
    }
    /// Changes with every change to `slots`: equal before and after a plugin call means
    /// the call left this screen's state alone.
    private(set) var version: UInt64 = 0
    private var marked: Set<Key>?
    /// The identity paths the plugin's binary trees defined for this instance, by id, and
    /// the id of each path (see `StateStorage+RenderPass.swift`).
    var identityPaths: [String] = []
    var identityIDs: [String: UInt32] = [:]
    /// The keys of the slots handed to the pass in progress, by batch position.
    var batchKeys: [Key] = []

    public init() {}

    /// The value at (identity, index) when its fingerprint matches; a slot of another type
    /// reads as empty so the view starts from its default.
    public func read(identity: String, index: UInt32, fingerprint: UInt64) -> [UInt8]? {
        let key = Key(identity: identity, index: index)
        marked?.insert(key)
        guard let slot = slots[key], slot.fingerprint == fingerprint else { return nil }
        return slot.bytes
    }

    public func write(identity: String, index: UInt32, fingerprint: UInt64, bytes: [UInt8]) {
        let key = Key(identity: identity, index: index)
        marked?.insert(key)
        slots[key] = Slot(fingerprint: fingerprint, bytes: bytes)
    }

    public func beginRenderPass() {
        marked = []
    }

    /// Ends the pass; drops every slot not read or written in it. Returns what was dropped.
    @discardableResult
    public func endRenderPass() -> [Key] {
        guard let alive = marked else { return [] }
        marked = nil
        let dropped = slots.keys.filter { !alive.contains($0) }
        for key in dropped { slots[key] = nil }
        return dropped.sorted()
    }

    /// Ends a pass without collecting: a render that failed must not cost any state.
    public func abandonRenderPass() {
        marked = nil
        batchKeys.removeAll(keepingCapacity: true)
    }

    /// The slots marked during the pass, ending the marking.
    func takeMarks() -> Set<Key> {
        defer { marked = nil }
        return marked ?? []
    }

    /// Drops every slot at or below `path` (a branch that is no longer taken).
    @discardableResult
    public func invalidateDescendants(of path: String) -> Int {
        let doomed = slots.keys.filter { key in
            key.identity == path || key.identity.hasPrefix(path + "/") || key.identity.hasPrefix(path + ".")
        }
        for key in doomed { slots[key] = nil }
        return doomed.count
    }

    public func removeAll() {
        slots.removeAll()
        marked = nil
        batchKeys.removeAll()
    }

    /// Every slot (for `--keep-state` reload and the `state` command).
    public var snapshot: [Key: Slot] { slots }

    /// Restores slots taken from another instance of the same route.
    public func restore(_ saved: [Key: Slot]) {
        for (key, slot) in saved { slots[key] = slot }
    }

    public var byteCount: Int { slots.values.reduce(0) { $0 + $1.bytes.count } }
}
