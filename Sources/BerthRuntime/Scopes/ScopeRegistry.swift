
/// Scoped services: who provides each key, in which scope kind, and the scopes alive now.
///
/// The current request scope is a task-local value, so concurrent requests never see each
/// other's instances: child tasks inherit it, detached tasks do not. (The seed kept one
/// process-wide "current id" per kind, so concurrent requests overwrote each other.)
/// Resolution and registration are thread-safe, and no lock is held while a factory runs.
public final class ScopeRegistry: Sendable {
    /// How a key's instances are made and released.
    struct Registration: Sendable {
        let key: String
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
    }

    private struct State {
        /// Per key, the registrations of each generation that made one, oldest first; the
        /// newest is in force. Ending a generation removes only its own, so a rolled-back
        /// reload finds the old generation's registration again.
        var registrations: [String: [Registration]] = [:]
        /// Keys whose provider was unloaded, with that provider, so they fail clearly.
        var unloaded: [String: String] = [:]
        var session: Scope?
        /// Every scope alive now, weakly (request scopes too, while their task runs).
        var live: [ObjectIdentifier: WeakScope] = [:]
        var requestsStarted = 0
    }

    private struct WeakScope {
        weak var scope: Scope?
    }

    private let state = Locked(State())
    /// The host-lifetime scope.
    public let singleton: Scope

    /// The request scope of the running task, if any.
    @TaskLocal static var currentRequest: Scope?
    /// The screen scope of the screen the host is calling into, if any.
    @TaskLocal static var currentScreen: Scope?

    public init() {
        singleton = Scope(kind: .singleton, id: "host", owner: "host")
        track(singleton)
    }

    // MARK: Registration

    /// Registers `key` with a factory and a release (replacing an earlier registration of
    /// the same provider; a key of another provider is refused).
    func register(_ registration: Registration) throws(ScopeError) {
        try state.withLock { state throws(ScopeError) in
            if let existing = state.registrations[registration.key]?.last, existing.plugin != registration.plugin {
                throw ScopeError(.duplicate, key: registration.key, "already provided by \(existing.plugin)")
            }
            var list = state.registrations[registration.key] ?? []
            list.removeAll { $0.generation == registration.generation }
            list.append(registration)
            state.registrations[registration.key] = list.sorted { $0.generation < $1.generation }
            state.unloaded[registration.key] = nil
        }
    }

    /// Registers a Swift type for the host (an embedding app): `key` defaults to the type.
    public func registerScoped<T: AnyObject & Sendable>(_ type: T.Type, scope: ScopeKind, key: String? = nil,
                                                        factory: @escaping @Sendable () throws -> T) throws(ScopeError) {
        try register(Registration(key: key ?? Self.key(for: type), kind: scope, plugin: "host", generation: 0,
                                  make: .sync { .object(try factory()) }, release: { _ in }))
    }

    /// Registers a Swift type with an async factory; resolves in one scope share one call.
    public func registerAsyncScoped<T: AnyObject & Sendable>(_ type: T.Type, scope: ScopeKind, key: String? = nil,
                                                             factory: @escaping @Sendable () async throws -> T) throws(ScopeError) {
        try register(Registration(key: key ?? Self.key(for: type), kind: scope, plugin: "host", generation: 0,
                                  make: .async { .object(try await factory()) }, release: { _ in }))
    }

    /// `String(reflecting:)` of each type, computed once: building it costs far more than
    /// the rest of a cached resolve.
    private static let typeKeys = Locked<[ObjectIdentifier: String]>([:])

    static func key<T>(for type: T.Type) -> String {
        let identifier = ObjectIdentifier(type)
        if let key = typeKeys.withLock({ $0[identifier] }) { return key }
        let key = String(reflecting: type)
        typeKeys.withLock { $0[identifier] = key }
        return key
    }

    // MARK: Resolution

    /// The instance of `T` in the current scope of its kind. When no such scope is current
    /// it throws a `ScopeError` saying so (the diagnostic), never a silent new instance.
    public func resolve<T: AnyObject>(_ type: T.Type, key: String? = nil, screen: Scope? = nil) throws(ScopeError) -> T {
        let key = key ?? Self.key(for: type)
        guard case .object(let object) = try resolve(key: key, screen: screen), let typed = object as? T else {
            throw ScopeError(.wrongType, key: key, "the instance is not a \(T.self)")
        }
        return typed
    }

    /// Async form: works for sync and async factories; async ones are single-flight.
    public func resolveAsync<T: AnyObject>(_ type: T.Type, key: String? = nil, screen: Scope? = nil) async throws -> T {
        let key = key ?? Self.key(for: type)
        let registration = try registration(for: key)
        let scope = try currentScope(of: registration.kind, for: key, screen: screen)
        let value: ScopedValue
        switch registration.make {
        case .async(let factory):
            value = try await scope.resolveAsync(key: key, provider: registration.provider, release: registration.release, factory: factory)
        case .sync(let factory):
            value = try scope.resolve(key: key, provider: registration.provider, release: registration.release) { () throws(ScopeError) in
                do { return try factory() } catch { throw ScopeError(.factoryFailed, key: key, "the factory failed: \(error)") }
            }
        }
        guard case .object(let object) = value, let typed = object as? T else {
            throw ScopeError(.wrongType, key: key, "the instance is not a \(T.self)")
        }
        return typed
    }

    /// Resolves `key` (sync factories only) in the current scope of its kind.
    func resolve(key: String, screen: Scope?) throws(ScopeError) -> ScopedValue {
        let registration = try registration(for: key)
        let scope = try currentScope(of: registration.kind, for: key, screen: screen)
        guard case .sync(let factory) = registration.make else {
            throw ScopeError(.factoryFailed, key: key, "has an async factory; resolve it with resolveAsync")
        }
        return try scope.resolve(key: key, provider: registration.provider, release: registration.release) { () throws(ScopeError) in
            do { return try factory() } catch { throw ScopeError(.factoryFailed, key: key, "the factory failed: \(error)") }
        }
    }

    private func registration(for key: String) throws(ScopeError) -> Registration {
        try state.withLock { state throws(ScopeError) in
            if let registration = state.registrations[key]?.last { return registration }
            if let provider = state.unloaded[key] {
                throw ScopeError(.providerUnloaded, key: key, "its provider \(provider) was unloaded; nothing of it is called")
            }
            throw ScopeError(.notRegistered, key: key, "no plugin or host registered this service")
        }
    }

    private func currentScope(of kind: ScopeKind, for key: String, screen: Scope?) throws(ScopeError) -> Scope {
        switch kind {
        case .singleton:
            return singleton
        case .screen:
            guard let scope = screen ?? Self.currentScreen else {
                throw ScopeError(.noCurrentScope, key: key, "is screen-scoped but no screen is current (resolve it from a screen)")
            }
            return scope
        case .session:
            guard let scope = state.withLock({ $0.session }) else {
                throw ScopeError(.noCurrentScope, key: key, "is session-scoped but no session is current (session begin ID)")
            }
            return scope
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

    private func makeRequestScope(owner: String) -> Scope {
        let number = state.withLock { state in
            state.requestsStarted += 1
            return state.requestsStarted
        }
        let scope = Scope(kind: .request, id: String(number), owner: owner) { [weak self] ended in self?.untrack(ended) }
        track(scope)
        return scope
    }

    /// A new screen scope for a module instance; ended when the screen is removed for good.
    func makeScreenScope(screen: Int, owner: String) -> Scope {
        let scope = Scope(kind: .screen, id: String(screen), owner: owner) { [weak self] ended in self?.untrack(ended) }
        track(scope)
        return scope
    }

    /// Begins session `id`, ending the current one first (its instances released).
    public func beginSession(_ id: String) {
        let scope = Scope(kind: .session, id: id, owner: "host") { [weak self] ended in self?.untrack(ended) }
        track(scope)
        let previous = state.withLock { state in
            defer { state.session = scope }
            return state.session
        }
        previous?.end()
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

    private func untrack(_ scope: Scope) {
        _ = state.withLock { $0.live.removeValue(forKey: ObjectIdentifier(scope)) }
    }
}
