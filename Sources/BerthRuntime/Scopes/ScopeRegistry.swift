import Foundation

/// Scoped services: who provides each key, in which scope kind, and the scopes alive now.
///
/// The current request scope is a task-local value, so concurrent requests never see each
/// other's instances: child tasks inherit it, detached tasks do not. (The seed kept one
/// process-wide "current id" per kind, so concurrent requests overwrote each other.)
/// Resolution and registration are thread-safe, and no lock is held while a factory runs.
public final class ScopeRegistry: Sendable {
    /// How a key's instances are made and released.
    struct Registration: Sendable {
        /// The key as people read it (a type's name, a plugin's key).
        let key: String
        /// What it is found by.
        let serviceKey: ServiceKey
        let kind: ScopeKind
        /// `host`, or the plugin id whose generation registered it.
        let plugin: String
        /// The generation that registered it (0 for the host).
        let generation: Int
        /// Who made the instances: `host` or `plugin#generation`.
        var provider: String { generation == 0 ? plugin : "\(plugin)#\(generation)" }
        let make: Factory
        let release: @Sendable (ScopedValue) -> Void

        enum Factory: Sendable {
            case sync(@Sendable () throws -> ScopedValue)
            case async(@Sendable () async throws -> ScopedValue)
        }

        init(key: String, serviceKey: ServiceKey? = nil, kind: ScopeKind, plugin: String, generation: Int, make: Factory,
             release: @escaping @Sendable (ScopedValue) -> Void) {
            self.key = key
            self.serviceKey = serviceKey ?? .named(key)
            self.kind = kind
            self.plugin = plugin
            self.generation = generation
            self.make = make
            self.release = release
        }
    }

    private struct State {
        /// Per key, the registrations of each generation that made one, oldest first; the
        /// newest is in force. Ending a generation removes only its own, so a rolled-back
        /// reload finds the old generation's registration again.
        var registrations: [ServiceKey: [Registration]] = [:]
        /// A type registered by the host, by its name, so a plugin's key finds it too.
        var typesByName: [String: ServiceKey] = [:]
        /// Keys whose provider was unloaded, with that provider, so they fail clearly.
        var unloaded: [ServiceKey: String] = [:]
        var session: Scope?
        /// Every scope alive now, weakly (request scopes too, while their task runs).
        var live: [ObjectIdentifier: WeakScope] = [:]
        var requestsStarted = 0
    }

    private struct WeakScope {
        weak var scope: Scope?
    }

    /// One lock for the registry and every scope it makes: a cached resolve takes it once.
    private let lock = NSLock()
    private let state: Locked<State>
    /// The host-lifetime scope.
    public let singleton: Scope

    /// The request scope of the running task, if any.
    @TaskLocal static var currentRequest: Scope?
    /// The screen scope of the screen the host is calling into, if any.
    @TaskLocal static var currentScreen: Scope?

    public init() {
        state = Locked(State(), lock: lock)
        singleton = Scope(kind: .singleton, id: "host", owner: "host", lock: lock)
        track(singleton)
    }

    // MARK: Registration

    /// Registers `key` with a factory and a release (replacing an earlier registration of
    /// the same provider; a key of another provider is refused).
    func register(_ registration: Registration) throws(ScopeError) {
        try state.withLock { state throws(ScopeError) in
            let key = registration.serviceKey
            if let existing = state.registrations[key]?.last, existing.plugin != registration.plugin {
                throw ScopeError(.duplicate, key: registration.key, "already provided by \(existing.plugin)")
            }
            var list = state.registrations[key] ?? []
            list.removeAll { $0.generation == registration.generation }
            list.append(registration)
            state.registrations[key] = list.sorted { $0.generation < $1.generation }
            state.unloaded[key] = nil
            if key.isType { state.typesByName[registration.key] = key }
        }
    }

    /// Registers a Swift type for the host (an embedding app): `key` defaults to the type.
    public func registerScoped<T: AnyObject & Sendable>(_ type: T.Type, scope: ScopeKind, key: String? = nil,
                                                        factory: @escaping @Sendable () throws -> T) throws(ScopeError) {
        try register(Registration(key: key ?? Self.key(for: type), serviceKey: key.map(ServiceKey.named) ?? .type(type),
                                  kind: scope, plugin: "host", generation: 0, make: .sync { .object(try factory()) }, release: { _ in }))
    }

    /// Registers a Swift type with an async factory; resolves in one scope share one call.
    public func registerAsyncScoped<T: AnyObject & Sendable>(_ type: T.Type, scope: ScopeKind, key: String? = nil,
                                                             factory: @escaping @Sendable () async throws -> T) throws(ScopeError) {
        try register(Registration(key: key ?? Self.key(for: type), serviceKey: key.map(ServiceKey.named) ?? .type(type),
                                  kind: scope, plugin: "host", generation: 0, make: .async { .object(try await factory()) }, release: { _ in }))
    }

    /// A type's key as people read it (registration, errors, `scopes`).
    static func key<T>(for type: T.Type) -> String {
        String(reflecting: type)
    }

    // MARK: Resolution

    /// The instance of `T` in the current scope of its kind. When no such scope is current
    /// it throws a `ScopeError` saying so (the diagnostic), never a silent new instance.
    ///
    /// An instance already made is found under the one lock, by the type's identity: no
    /// string is built and, for a type key, no dynamic cast is made.
    public func resolve<T: AnyObject>(_ type: T.Type, key: String? = nil, screen: Scope? = nil) throws(ScopeError) -> T {
        let serviceKey = key.map(ServiceKey.named) ?? .type(type)
        let object: AnyObject
        switch try lookup(serviceKey, name: key ?? Self.key(for: type), screen: screen) {
        case .cached(.object(let cached)):
            object = cached
        case .make(let registration, let scope):
            guard case .object(let made) = try make(registration, in: scope) else { throw Self.wrongType(T.self, key: registration.key) }
            object = made
        case .cached(.pointer):
            throw Self.wrongType(T.self, key: key ?? Self.key(for: type))
        }
        // A type key's factory was registered for exactly `T` (registerScoped), so the
        // checked cast is needed only for a key a caller chose.
        if serviceKey.isType { return unsafeDowncast(object, to: T.self) }
        guard let typed = object as? T else { throw Self.wrongType(T.self, key: key ?? Self.key(for: type)) }
        return typed
    }

    /// Async form: works for sync and async factories; async ones are single-flight.
    public func resolveAsync<T: AnyObject>(_ type: T.Type, key: String? = nil, screen: Scope? = nil) async throws -> T {
        let serviceKey = key.map(ServiceKey.named) ?? .type(type)
        let value: ScopedValue
        switch try lookup(serviceKey, name: key ?? Self.key(for: type), screen: screen) {
        case .cached(let cached):
            value = cached
        case .make(let registration, let scope):
            switch registration.make {
            case .async(let factory):
                value = try await scope.resolveAsync(key: registration.serviceKey, name: registration.key, provider: registration.provider,
                                                     release: registration.release, factory: factory)
            case .sync:
                value = try make(registration, in: scope)
            }
        }
        guard case .object(let object) = value, let typed = object as? T else {
            throw Self.wrongType(T.self, key: key ?? Self.key(for: type))
        }
        return typed
    }

    /// Resolves `key` (sync factories only) in the current scope of its kind: a plugin's
    /// key, or the name of a type the host registered.
    func resolve(key: String, screen: Scope?) throws(ScopeError) -> ScopedValue {
        switch try lookup(.named(key), name: key, screen: screen) {
        case .cached(let value): return value
        case .make(let registration, let scope): return try make(registration, in: scope)
        }
    }

    private enum Lookup {
        /// Made before, in the current scope.
        case cached(ScopedValue)
        /// Not made yet in `Scope`: the registration's factory runs outside the lock.
        case make(Registration, Scope)
    }

    /// The registration in force for `key`, its current scope and the instance already
    /// there, all under the one lock.
    private func lookup(_ key: ServiceKey, name: @autoclosure () -> String, screen: Scope?) throws(ScopeError) -> Lookup {
        try state.withLock { state throws(ScopeError) -> Lookup in
            guard let registration = state.registrations[key]?.last
                ?? state.typesByName[name()].flatMap({ state.registrations[$0]?.last }) else {
                if let provider = state.unloaded[key] {
                    throw ScopeError(.providerUnloaded, key: name(), "its provider \(provider) was unloaded; nothing of it is called")
                }
                throw ScopeError(.notRegistered, key: name(), "no plugin or host registered this service")
            }
            let scope = try currentScope(of: registration.kind, for: registration.key, screen: screen, session: state.session)
            if let value = scope.cachedValueLockHeld(registration.serviceKey) { return .cached(value) }
            return .make(registration, scope)
        }
    }

    /// Runs a sync factory (outside the lock) and keeps its instance in `scope`.
    private func make(_ registration: Registration, in scope: Scope) throws(ScopeError) -> ScopedValue {
        guard case .sync(let factory) = registration.make else {
            throw ScopeError(.factoryFailed, key: registration.key, "has an async factory; resolve it with resolveAsync")
        }
        let key = registration.key
        return try scope.resolve(key: registration.serviceKey, name: key, provider: registration.provider, release: registration.release) { () throws(ScopeError) in
            do { return try factory() } catch { throw ScopeError(.factoryFailed, key: key, "the factory failed: \(error)") }
        }
    }

    private static func wrongType<T>(_ type: T.Type, key: String) -> ScopeError {
        ScopeError(.wrongType, key: key, "the instance is not a \(T.self)")
    }

    private func currentScope(of kind: ScopeKind, for key: String, screen: Scope?, session: Scope?) throws(ScopeError) -> Scope {
        switch kind {
        case .singleton:
            return singleton
        case .screen:
            guard let scope = screen ?? Self.currentScreen else {
                throw ScopeError(.noCurrentScope, key: key, "is screen-scoped but no screen is current (resolve it from a screen)")
            }
            return scope
        case .session:
            guard let session else {
                throw ScopeError(.noCurrentScope, key: key, "is session-scoped but no session is current (session begin ID)")
            }
            return session
        case .request:
            guard let scope = Self.currentRequest else {
                throw ScopeError(.noCurrentScope, key: key, "is request-scoped but no request is current (resolve it while handling an action or command)")
            }
            return scope
        }
    }

    // MARK: Scopes

    /// Runs `body` in a new request scope, then ends it (releasing its instances).
    public func withRequestScope<T>(owner: String = "host", _ body: () throws -> T) rethrows -> T {
        let scope = makeRequestScope(owner: owner)
        defer { scope.end() }
        return try Self.$currentRequest.withValue(scope, operation: body)
    }

    /// Async form: child tasks of `body` inherit the scope; detached tasks do not.
    public func withRequestScope<T>(owner: String = "host", _ body: () async throws -> T) async rethrows -> T {
        let scope = makeRequestScope(owner: owner)
        defer { scope.end() }
        return try await Self.$currentRequest.withValue(scope, operation: body)
    }

    /// One critical section: the request's number and its place among the live scopes.
    private func makeRequestScope(owner: String) -> Scope {
        state.withLock { state in
            state.requestsStarted += 1
            let scope = Scope(kind: .request, id: String(state.requestsStarted), owner: owner, lock: lock, onEnd: untrackLockHeld)
            state.live[ObjectIdentifier(scope)] = WeakScope(scope: scope)
            return scope
        }
    }

    /// A new screen scope for a module instance; ended when the screen is removed for good.
    func makeScreenScope(screen: Int, owner: String) -> Scope {
        let scope = Scope(kind: .screen, id: String(screen), owner: owner, lock: lock, onEnd: untrackLockHeld)
        track(scope)
        return scope
    }

    /// Begins session `id`, ending the current one first (its instances released).
    public func beginSession(_ id: String) {
        let scope = Scope(kind: .session, id: id, owner: "host", lock: lock, onEnd: untrackLockHeld)
        let previous = state.withLock { state in
            state.live[ObjectIdentifier(scope)] = WeakScope(scope: scope)
            defer { state.session = scope }
            return state.session
        }
        previous?.end()
    }

    /// A scope's `onEnd`: runs inside the scope's (shared) lock.
    private var untrackLockHeld: @Sendable (Scope) -> Void {
        { [weak self] ended in self?.state.withLockHeld { _ = $0.live.removeValue(forKey: ObjectIdentifier(ended)) } }
    }

    /// Ends the current session, releasing every session instance. Returns its id.
    @discardableResult
    public func endSession() -> String? {
        let ended = state.withLock { state in
            defer { state.session = nil }
            return state.session
        }
        ended?.end()
        return ended?.id
    }

    public var currentSession: Scope? { state.withLock { $0.session } }

    /// Every scope alive now (the `scopes` command; the memory checks).
    public var liveScopes: [Scope] {
        state.withLock { state in state.live.values.compactMap(\.scope) }
    }

    /// Keys registered, with kind and provider.
    public var registrations: [(key: String, kind: ScopeKind, provider: String)] {
        state.withLock { $0.registrations.values.compactMap(\.last).map { ($0.key, $0.kind, $0.provider) } }.sorted { $0.key < $1.key }
    }

    /// A plugin generation is going away: every instance its factories made is released in
    /// every live scope (while its image is still loaded), its registrations are dropped
    /// unless a newer generation replaced them, and its keys then fail with "provider
    /// unloaded" instead of calling into a retired image.
    @discardableResult
    func unloadProvider(plugin: String, generation: Int) -> Int {
        let provider = "\(plugin)#\(generation)"
        let scopes: [Scope] = state.withLock { state in
            for (key, list) in state.registrations where list.contains(where: { $0.plugin == plugin && $0.generation == generation }) {
                let remaining = list.filter { $0.generation != generation }
                state.registrations[key] = remaining.isEmpty ? nil : remaining
                if remaining.isEmpty { state.unloaded[key] = plugin }
            }
            return state.live.values.compactMap(\.scope)
        }
        return scopes.reduce(0) { $0 + $1.releaseInstances(of: provider) }
    }

    /// Ends every scope (host shutdown).
    func endAll() {
        endSession()
        for scope in liveScopes where scope.kind != .singleton { scope.end() }
        singleton.end()
    }

    private func track(_ scope: Scope) {
        state.withLock { $0.live[ObjectIdentifier(scope)] = WeakScope(scope: scope) }
    }

}
