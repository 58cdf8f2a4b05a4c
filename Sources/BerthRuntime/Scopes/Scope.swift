import Foundation

/// One scope: the instances resolved in it, in creation order, and the async factories
/// still running (single flight). Thread-safe; a factory never runs under the lock.
///
/// Ending a scope releases its instances in reverse creation order (their deinit runs, or
/// their C release callback) and refuses later resolves. Nothing of it is kept afterwards.
public final class Scope: Sendable, CustomStringConvertible {
    public let kind: ScopeKind
    /// A name for people (`session alice`, `screen 7`, `request 12`).
    public let id: String
    /// Who it belongs to (`host`, a screen, a plugin).
    public let owner: String

    struct Entry {
        let key: ServiceKey
        /// The key as people read it (a type's name or a plugin's key).
        let name: String
        let provider: String
        let value: ScopedValue
        let release: @Sendable (ScopedValue) -> Void
    }

    private struct State {
        /// Creation order, for release in reverse.
        var entries: [Entry] = []
        /// The same instances by key: a cached resolve is one hash lookup.
        var index: [ServiceKey: ScopedValue] = [:]
        var inFlight: [ServiceKey: Task<ScopedValue, any Error>] = [:]
        var ended = false

        mutating func store(_ entry: Entry) {
            entries.append(entry)
            index[entry.key] = entry.value
        }
    }

    private let state: Locked<State>
    /// Runs with the scope's lock held, once, when the scope ends (the registry forgets it).
    private let onEnd: @Sendable (Scope) -> Void

    /// `lock` is the registry's: a cached resolve reads the registration and this scope's
    /// instance in one critical section.
    init(kind: ScopeKind, id: String, owner: String, lock: NSLock = NSLock(), onEnd: @escaping @Sendable (Scope) -> Void = { _ in }) {
        self.kind = kind
        self.id = id
        self.owner = owner
        self.state = Locked(State(), lock: lock)
        self.onEnd = onEnd
    }

    public var description: String { "\(kind) \(id)" }

    public var isEnded: Bool { state.withLock { $0.ended } }

    /// The keys of the instances held now, in creation order.
    public var keys: [String] { state.withLock { $0.entries.map(\.name) } }

    /// The instance already made for `key`, for a caller holding the shared lock.
    func cachedValueLockHeld(_ key: ServiceKey) -> ScopedValue? {
        state.withLockHeld { $0.ended ? nil : $0.index[key] }
    }

    /// The instance for `key` in this scope, made by `factory` the first time (outside the
    /// lock). When two threads race, the first instance stored wins and the other is
    /// released at once.
    func resolve(
        key serviceKey: ServiceKey, name key: String, provider: String, release: @escaping @Sendable (ScopedValue) -> Void,
        factory: () throws(ScopeError) -> ScopedValue
    ) throws(ScopeError) -> ScopedValue {
        switch state.withLock({ state -> Result<ScopedValue?, ScopeError> in
            if state.ended { return .failure(ScopeError(.scopeEnded, key: key, "the \(kind) scope \(id) has ended")) }
            return .success(state.index[serviceKey])
        }) {
        case .failure(let error): throw error
        case .success(let existing?): return existing
        case .success(nil): break
        }
        let made = try factory()
        let kept: Result<ScopedValue, ScopeError> = state.withLock { state in
            if state.ended { return .failure(ScopeError(.scopeEnded, key: key, "the \(kind) scope \(id) ended while \(key) was being made")) }
            if let winner = state.index[serviceKey] { return .success(winner) }
            state.store(Entry(key: serviceKey, name: key, provider: provider, value: made, release: release))
            return .success(made)
        }
        switch kept {
        case .success(let value):
            if !value.isSame(as: made) { release(made) }
            return value
        case .failure(let error):
            release(made)
            throw error
        }
    }

    /// Like `resolve`, for an async factory: concurrent resolves of one key in this scope
    /// share a single call of the factory and all get its instance.
    func resolveAsync(
        key serviceKey: ServiceKey, name key: String, provider: String, release: @escaping @Sendable (ScopedValue) -> Void,
        factory: @escaping @Sendable () async throws -> ScopedValue
    ) async throws -> ScopedValue {
        let task: Task<ScopedValue, any Error> = try state.withLock { state in
            if state.ended { throw ScopeError(.scopeEnded, key: key, "the \(kind) scope \(id) has ended") }
            if let existing = state.index[serviceKey] {
                return Task { existing }
            }
            if let running = state.inFlight[serviceKey] { return running }
            let running = Task { try await factory() }
            state.inFlight[serviceKey] = running
            return running
        }
        let value: ScopedValue
        do {
            value = try await task.value
        } catch {
            state.withLock { $0.inFlight[serviceKey] = nil }
            throw ScopeError(.factoryFailed, key: key, "the factory failed: \(error)")
        }
        // Exactly one waiter (the one that takes the in-flight entry) stores the instance,
        // or releases it when the scope ended meanwhile; the others only read.
        enum Outcome { case stored, shared, endedOwner, endedOther }
        let outcome: Outcome = state.withLock { state in
            let owner = state.inFlight.removeValue(forKey: serviceKey) != nil
            if state.ended { return owner ? .endedOwner : .endedOther }
            if owner { state.store(Entry(key: serviceKey, name: key, provider: provider, value: value, release: release)) }
            return owner ? .stored : .shared
        }
        switch outcome {
        case .stored, .shared:
            return value
        case .endedOwner:
            release(value)
            fallthrough
        case .endedOther:
            throw ScopeError(.scopeEnded, key: key, "the \(kind) scope \(id) ended while \(key) was being made")
        }
    }

    /// Ends the scope: releases every instance in reverse creation order. Idempotent.
    func end() {
        var remaining: [Entry] = []
        let endsNow: Bool = state.withLock { state in
            guard !state.ended else { return false }
            state.ended = true
            // In-flight factories are cancelled; their one owning waiter releases whatever
            // they still make (the entries stay so that waiter can be told apart).
            for task in state.inFlight.values { task.cancel() }
            swap(&remaining, &state.entries)
            state.index.removeAll()
            onEnd(self)
            return true
        }
        guard endsNow else { return }
        // Pop one at a time, so each instance's last reference goes (and its deinit runs)
        // in reverse creation order, not when the whole array is freed.
        while let entry = remaining.popLast() { entry.release(entry.value) }
    }

    /// Releases the instances `provider` made (its plugin is unloading); the scope goes on.
    func releaseInstances(of provider: String) -> Int {
        var released: [Entry] = state.withLock { state in
            let mine = state.entries.filter { $0.provider == provider }
            state.entries.removeAll { $0.provider == provider }
            for entry in mine { state.index[entry.key] = nil }
            return mine
        }
        let count = released.count
        while let entry = released.popLast() { entry.release(entry.value) }
        return count
    }
}

extension ScopedValue {
    func isSame(as other: ScopedValue) -> Bool {
        switch (self, other) {
        case (.object(let left), .object(let right)): left === right
        case (.pointer(let left), .pointer(let right)): left == right
        default: false
        }
    }
}
