/// The host-owned state of one module instance: every `@State` slot of its views, keyed
/// by (identity path, property index), holding bytes and a type fingerprint.
///
/// Render-pass GC: between `beginRenderPass` and `endRenderPass` every slot that is read
/// or written is marked; the end drops the slots of views that were not rendered.
/// Releasing the module instance drops everything (reopen-reset).
///
/// Public for its `read` and `write` only, which the benchmarks measure (a slot's cost
/// against a plain dictionary); the render-pass machinery is `package`.
@MainActor
public final class StateStorage {
    package struct Key: Hashable, Sendable, Comparable {
        package let identity: String
        package let index: UInt32

        package static func < (lhs: Key, rhs: Key) -> Bool {
            (lhs.identity, lhs.index) < (rhs.identity, rhs.index)
        }
    }

    package struct Slot: Sendable, Equatable {
        package var fingerprint: UInt64
        package var bytes: [UInt8]
    }

    package internal(set) var slots: [Key: Slot] = [:] {
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

    /// Empty storage.
    public init() {}

    /// The value at (identity, index) when its fingerprint matches; a slot of another type
    /// reads as empty so the view starts from its default.
    public func read(identity: String, index: UInt32, fingerprint: UInt64) -> [UInt8]? {
        let key = Key(identity: identity, index: index)
        marked?.insert(key)
        guard let slot = slots[key], slot.fingerprint == fingerprint else { return nil }
        return slot.bytes
    }

    /// Stores `bytes` at (identity, index) with the type fingerprint of the value.
    public func write(identity: String, index: UInt32, fingerprint: UInt64, bytes: [UInt8]) {
        let key = Key(identity: identity, index: index)
        marked?.insert(key)
        slots[key] = Slot(fingerprint: fingerprint, bytes: bytes)
    }

    package func beginRenderPass() {
        marked = []
    }

    /// Ends the pass; drops every slot not read or written in it. Returns what was dropped.
    @discardableResult
    package func endRenderPass() -> [Key] {
        guard let alive = marked else { return [] }
        marked = nil
        let dropped = slots.keys.filter { !alive.contains($0) }
        for key in dropped { slots[key] = nil }
        return dropped.sorted()
    }

    /// Ends a pass without collecting: a render that failed must not cost any state.
    package func abandonRenderPass() {
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
    package func invalidateDescendants(of path: String) -> Int {
        let doomed = slots.keys.filter { key in
            key.identity == path || key.identity.hasPrefix(path + "/") || key.identity.hasPrefix(path + ".")
        }
        for key in doomed { slots[key] = nil }
        return doomed.count
    }

    package func removeAll() {
        slots.removeAll()
        marked = nil
        batchKeys.removeAll()
    }

    /// Every slot (for `--keep-state` reload and the `state` command).
    package var snapshot: [Key: Slot] { slots }

    /// Restores slots taken from another instance of the same route.
    package func restore(_ saved: [Key: Slot]) {
        for (key, slot) in saved { slots[key] = slot }
    }

    package var byteCount: Int { slots.values.reduce(0) { $0 + $1.bytes.count } }
}
