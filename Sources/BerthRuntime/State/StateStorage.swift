@_spi(Engine) import BerthCore
/// The host-owned state of one module instance: every `@State` slot of its views, keyed
/// by (identity path, property index), holding bytes and a type fingerprint.
///
/// Render-pass GC: between `beginRenderPass` and `endRenderPass` every slot that is read
/// or written is marked; the end drops the slots of views that were not rendered.
/// Releasing the module instance drops everything (reopen-reset).
///
/// `@_spi(Engine) public` for its `read` and `write` only, which the benchmarks (a package of
/// their own, which cannot see `package` declarations) measure against a plain dictionary;
/// else `package`. Not part of the embedding API (Docs/embedding.md).
@MainActor
@_spi(Engine) public final class StateStorage {
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

    /// The plugin's budget this storage counts against (nil: unbounded, for benchmarks).
    package var budget: StateBudget?

    /// Empty storage.
    @_spi(Engine) public init() {}

    /// Every change to a slot passes here, so the budget always matches what is held.
    func put(_ key: Key, _ slot: Slot?) {
        if let budget {
            let old = slots[key].map { StateBudget.cost(identity: key.identity, value: $0.bytes.count) } ?? 0
            let new = slot.map { StateBudget.cost(identity: key.identity, value: $0.bytes.count) } ?? 0
            let slotDelta = (slot == nil ? 0 : 1) - (slots[key] == nil ? 0 : 1)
            budget.changed(bytes: new - old, slots: slotDelta)
        }
        slots[key] = slot
    }

    /// The value at (identity, index) when its fingerprint matches; a slot of another type
    /// reads as empty so the view starts from its default.
    @_spi(Engine) public func read(identity: String, index: UInt32, fingerprint: UInt64) -> [UInt8]? {
        let key = Key(identity: identity, index: index)
        marked?.insert(key)
        guard let slot = slots[key], slot.fingerprint == fingerprint else { return nil }
        return slot.bytes
    }

    /// Stores `bytes` at (identity, index) with the type fingerprint of the value. Returns
    /// false, storing nothing, when the plugin's budget cannot hold it.
    @discardableResult
    @_spi(Engine) public func write(identity: String, index: UInt32, fingerprint: UInt64, bytes: [UInt8]) -> Bool {
        let key = Key(identity: identity, index: index)
        if let budget {
            let old = slots[key].map { StateBudget.cost(identity: identity, value: $0.bytes.count) }
            guard budget.admits(replacing: old, with: StateBudget.cost(identity: identity, value: bytes.count)) else { return false }
        }
        marked?.insert(key)
        put(key, Slot(fingerprint: fingerprint, bytes: bytes))
        return true
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
        for key in dropped { put(key, nil) }
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
        for key in doomed { put(key, nil) }
        return doomed.count
    }

    package func removeAll() {
        budget?.changed(bytes: -slots.reduce(0) { $0 + StateBudget.cost(identity: $1.key.identity, value: $1.value.bytes.count) }, slots: -slots.count)
        slots.removeAll()
        marked = nil
        batchKeys.removeAll()
    }

    /// Every slot (for `--keep-state` reload and the `state` command).
    package var snapshot: [Key: Slot] { slots }

    /// Restores slots taken from another instance of the same route.
    package func restore(_ saved: [Key: Slot]) {
        for (key, slot) in saved { put(key, slot) }
    }

    package var byteCount: Int { slots.values.reduce(0) { $0 + $1.bytes.count } }
}
