@_spi(Engine) import BerthCore
import Foundation

/// One scope: the instances resolved in it, in creation order, and the async factories
/// still running (single flight). Thread-safe; a factory never runs under the lock.
///
/// Ending a scope releases its instances in reverse creation order (their deinit runs, or
/// their C release callback) and refuses later resolves. Nothing of it is kept afterwards.
@_spi(Engine) public final class Scope: @unchecked Sendable, CustomStringConvertible {
    // @unchecked: `state` is only read or written while `lock` (the registry's) is held.
    /// How long it lives: singleton, screen, session or request.
    package let kind: ScopeKind
    private let name: Name
    /// Who it belongs to (`host`, a screen, a plugin).
    package let owner: String

    /// A name for people (`session alice`, `screen 7`, `request 12`).
    package var id: String {
        switch name {
        case .text(let text): text
        case .number(let number): String(number)
        }
    }

    /// A request or screen is named by its number, formatted only when someone reads it.
    enum Name {
        case text(String)
        case number(Int)
    }

    struct Entry {
        /// The key's dense index (the registry's), where `instances` holds this entry's value.
        let slot: Int
        let value: ScopedValue
        /// Its key, provider and release.
        let registration: ScopeRegistry.Registration

        /// The key as people read it (a type's name or a plugin's key).
        var name: String { registration.key }
        var provider: String { registration.provider }

        func release() { registration.release(value) }
    }

    private struct State {
        /// Creation order, for release in reverse.
        var entries: [Entry] = []
        /// The same instances by slot, once there are more than `scanLimit`: then a cached
        /// resolve is one array read. Until then it scans `entries`, so a scope with a few
        /// instances (a request's) allocates one array, not two.
        var instances: [ScopedValue?] = []
        var inFlight: [Int: Task<ScopedValue, any Error>] = [:]
        var ended = false

        static let scanLimit = 8

        /// The instance made in `slot`, if any.
        func value(at slot: Int) -> ScopedValue? {
            guard instances.isEmpty else { return slot < instances.count ? instances[slot] : nil }
            for entry in entries where entry.slot == slot { return entry.value }
            return nil
        }

        mutating func store(_ entry: Entry) {
            entries.append(entry)
            if instances.isEmpty {
                guard entries.count > Self.scanLimit else { return }
                for earlier in entries { place(earlier) }
            } else {
                place(entry)
            }
        }

        private mutating func place(_ entry: Entry) {
            if instances.count <= entry.slot { instances.append(contentsOf: repeatElement(nil, count: entry.slot + 1 - instances.count)) }
            instances[entry.slot] = entry.value
        }

        mutating func removeInstance(at slot: Int) {
            if slot < instances.count { instances[slot] = nil }
        }
    }

    /// The registry's lock: a cached resolve reads the registration and this scope's
    /// instance in one critical section.
    private let lock: Locked<Void>
    /// Touched only with `lock` held: no dynamic exclusivity check (see ScopeRegistry).
    @exclusivity(unchecked) private var state = State()
    /// A live request scope's place among the registry's (`LiveScopes`), else -1.
    /// Guarded by the lock.
    var requestIndexLockHeld = -1
    /// Runs with the lock held, once, when the scope ends (the registry forgets it).
    private let onEnd: @Sendable (Scope) -> Void

    init(kind: ScopeKind, name: Name, owner: String, lock: Locked<Void> = Locked(()), onEnd: @escaping @Sendable (Scope) -> Void = { _ in }) {
        self.kind = kind
        self.name = name
        self.owner = owner
        self.lock = lock
        self.onEnd = onEnd
    }

    /// `kind id`, as the log prints it (`session alice`).
    public var description: String { "\(kind) \(id)" }

    /// True once ended: its instances are released and resolves in it are refused.
    package var isEnded: Bool { withLock { $0.ended } }

    /// The keys of the instances held now, in creation order.
    package var keys: [String] { withLock { $0.entries.map(\.name) } }

    @inline(__always)
    private func withLock<Result, Failure: Error>(_ body: (inout State) throws(Failure) -> Result) throws(Failure) -> Result {
        try lock.whileLocked { () throws(Failure) in try body(&state) }
    }

    /// For a caller holding the shared lock: whether the scope ended.
    var isEndedLockHeld: Bool { state.ended }

    /// The instance already made in `slot`, for a caller holding the shared lock (an ended
    /// scope holds none).
    func cachedValueLockHeld(_ slot: Int) -> ScopedValue? {
        state.value(at: slot)
    }

    /// Keeps `made` (a factory's instance, made outside the lock) for `slot`. When two
    /// threads raced, the first instance stored wins and the other is released at once;
    /// when the scope ended meanwhile, `made` is released and the resolve fails.
    func keep(_ made: ScopedValue, slot: Int, registration: ScopeRegistry.Registration) throws(ScopeError) -> ScopedValue {
        let (key, release) = (registration.key, registration.release)
        let kept: Result<ScopedValue, ScopeError> = withLock { state in
            if state.ended { return .failure(ScopeError(.scopeEnded, key: key, "the \(kind) scope \(id) ended while \(key) was being made")) }
            if let winner = state.value(at: slot) { return .success(winner) }
            state.store(Entry(slot: slot, value: made, registration: registration))
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

    /// Like a sync resolve, for an async factory: concurrent resolves of one key in this
    /// scope share a single call of the factory and all get its instance.
    func resolveAsync(
        slot: Int, registration: ScopeRegistry.Registration, factory: @escaping @Sendable () async throws -> ScopedValue
    ) async throws -> ScopedValue {
        let key = registration.key
        enum Found { case made(ScopedValue), running(Task<ScopedValue, any Error>) }
        let found: Found = try withLock { state in
            if state.ended { throw ScopeError(.scopeEnded, key: key, "the \(kind) scope \(id) has ended") }
            if let existing = state.value(at: slot) { return .made(existing) }
            if let running = state.inFlight[slot] { return .running(running) }
            // Kept by slot until a waiter takes it (single flight); ending the scope cancels it.
            let running = Task { try await factory() }
            state.inFlight[slot] = running
            return .running(running)
        }
        let task: Task<ScopedValue, any Error>
        switch found {
        case .made(let existing): return existing
        case .running(let running): task = running
        }
        let value: ScopedValue
        do {
            value = try await task.value
        } catch {
            withLock { $0.inFlight[slot] = nil }
            throw ScopeError(.factoryFailed, key: key, "the factory failed: \(error)")
        }
        // Exactly one waiter (the one that takes the in-flight entry) stores the instance,
        // or releases it when the scope ended meanwhile; the others only read.
        enum Outcome { case stored, shared, endedOwner, endedOther }
        let outcome: Outcome = withLock { state in
            let owner = state.inFlight.removeValue(forKey: slot) != nil
            if state.ended { return owner ? .endedOwner : .endedOther }
            if owner { state.store(Entry(slot: slot, value: value, registration: registration)) }
            return owner ? .stored : .shared
        }
        switch outcome {
        case .stored, .shared:
            return value
        case .endedOwner:
            registration.release(value)
            fallthrough
        case .endedOther:
            throw ScopeError(.scopeEnded, key: key, "the \(kind) scope \(id) ended while \(key) was being made")
        }
    }

    /// Ends the scope: releases every instance in reverse creation order. Idempotent.
    func end() {
        var remaining: [Entry] = []
        let endsNow: Bool = withLock { state in
            guard !state.ended else { return false }
            state.ended = true
            // In-flight factories are cancelled; their one owning waiter releases whatever
            // they still make (the entries stay so that waiter can be told apart).
            for task in state.inFlight.values { task.cancel() }
            swap(&remaining, &state.entries)
            state.instances.removeAll()
            onEnd(self)
            return true
        }
        guard endsNow else { return }
        // Pop one at a time, so each instance's last reference goes (and its deinit runs)
        // in reverse creation order, not when the whole array is freed.
        while let entry = remaining.popLast() { entry.release() }
    }

    /// Releases the instances `provider` made (its plugin is unloading); the scope goes on.
    func releaseInstances(of provider: String) -> Int {
        var released: [Entry] = withLock { state in
            let mine = state.entries.filter { $0.provider == provider }
            state.entries.removeAll { $0.provider == provider }
            for entry in mine { state.removeInstance(at: entry.slot) }
            return mine
        }
        let count = released.count
        while let entry = released.popLast() { entry.release() }
        return count
    }
}

extension ScopedValue {
    func isSame(as other: ScopedValue) -> Bool {
        switch (self, other) {
        case (.object(let left), .object(let right)): left === right
        case (.pointer(let left), .pointer(let right)): left == right
        case (.workerInstance(let left), .workerInstance(let right)): left == right
        default: false
        }
    }
}
