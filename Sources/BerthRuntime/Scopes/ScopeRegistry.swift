@_spi(Engine) import BerthCore
import Foundation

/// Scoped services: who provides each key, in which scope kind, and the scopes alive now.
///
/// The current request scope is a task-local value, so concurrent requests never see each
/// other's instances: child tasks inherit it, detached tasks do not. (The seed kept one
/// process-wide "current id" per kind, so concurrent requests overwrote each other.)
/// Resolution and registration are thread-safe, and no lock is held while a factory runs.
/// `@_spi(Engine) public` where the benchmarks (a package of their own, which cannot see
/// `package` declarations) use it, else `package`: not part of the embedding API, which
/// shows screens and plugins as values (Docs/embedding.md).
@_spi(Engine) public final class ScopeRegistry: @unchecked Sendable {
    /// How a key's instances are made and released. A class: every instance a scope keeps
    /// names its registration with one reference, not copies of its strings and closures.
    final class Registration: Sendable {
        /// The key as people read it (a type's name, a plugin's key).
        let key: String
        /// What it is found by.
        let serviceKey: ServiceKey
        /// For a type key, the type (its identity finds the slot without hashing the key).
        let type: ObjectIdentifier?
        let kind: ScopeKind
        /// `host`, or the plugin id whose generation registered it.
        let plugin: String
        /// The generation that registered it (0 for the host).
        let generation: Int
        /// Who made the instances: `host` or `plugin#generation`.
        let provider: String
        let make: Factory
        let release: @Sendable (ScopedValue) -> Void
        /// The process its instances live in: only a consumer there may resolve it.
        let place: ServicePlace
        /// The providing plugin generation's capabilities (nil for the host's): whether
        /// other plugins may resolve it (`services.provide`).
        let providerGrant: CapabilityGrant?
        /// A contract's calls (ABI 1.2): its instances answer messages on the provider's
        /// lane, so a consumer in any process may call them. nil for a C table.
        let call: ContractCall?

        enum Factory: Sendable {
            case sync(@Sendable () throws -> ScopedValue)
            case async(@Sendable () async throws -> ScopedValue)
        }

        init(key: String, type: ObjectIdentifier? = nil, kind: ScopeKind, plugin: String, generation: Int, place: ServicePlace = .host,
             providerGrant: CapabilityGrant? = nil, call: ContractCall? = nil, make: Factory, release: @escaping @Sendable (ScopedValue) -> Void) {
            self.key = key
            self.type = type
            self.serviceKey = type.map { ServiceKey(type: $0) } ?? .named(key)
            self.kind = kind
            self.plugin = plugin
            self.generation = generation
            provider = generation == 0 ? plugin : "\(plugin)#\(generation)"
            self.make = make
            self.release = release
            self.place = place
            self.providerGrant = providerGrant
            self.call = call
        }
    }

    private struct State {
        /// Every key ever registered, by its slot: a dense index that also places its
        /// instances in each scope's table. A slot is never reused.
        var slots: [ServiceKey: Int] = [:]
        /// The same slots for type keys, found without hashing a `ServiceKey`.
        var typeSlots = TypeSlotTable()
        /// Per slot, the registrations of each generation that made one, oldest first; the
        /// newest is in force. Ending a generation removes only its own, so a rolled-back
        /// reload finds the old generation's registration again.
        var registrations: [[Registration]] = [] {
            didSet { kindsInForce = registrations.map { $0.last?.kind } }
        }
        /// Per slot, the scope kind of the registration in force: what the cached path reads
        /// (reading the registration itself would copy it, retaining each of its fields).
        private(set) var kindsInForce: [ScopeKind?] = []
        /// A type registered by the host, by its name, so a plugin's key finds it too.
        var typesByName: [String: Int] = [:]
        /// Slots whose provider was unloaded, with that provider, so they fail clearly.
        var unloaded: [Int: String] = [:]
        var session: Scope? {
            didSet { sessionReference = session.map { Unmanaged.passUnretained($0) } }
        }
        /// `session` without a retain, for the cached path: scopes carry a side table (the
        /// live list holds them weakly), so each retain and release of one is slow, and
        /// `session` keeps this one alive while the lock is held.
        private(set) var sessionReference: Unmanaged<Scope>?
        var requestsStarted = 0
        /// Providers (`id#generation`) whose generation is being made off the main actor, and
        /// what their entries registered meanwhile: held out of force until `admit`, so no
        /// consumer (nor a screen of the generation still in use) resolves into a generation
        /// before it replaces the old one.
        var making: Set<String> = []
        var held: [Registration] = []

        /// The slot of `key`, assigned now if it has none.
        mutating func slot(for key: ServiceKey, type: ObjectIdentifier?) -> Int {
            if let slot = slots[key] { return slot }
            let slot = registrations.count
            slots[key] = slot
            if let type { typeSlots.insert(type, slot: slot) }
            registrations.append([])
            return slot
        }
    }

    /// One lock for the registry and every scope it makes: a cached resolve takes it once.
    private let lock = Locked(())
    // @unchecked Sendable: `state` and `live` are only touched while `lock` is held, so the
    // dynamic exclusivity check on each access (a sixth of a cached resolve) proves nothing.
    @exclusivity(unchecked) private var state = State()
    private let live = LiveScopes()
    /// Every scope's `onEnd` (made once): runs inside the shared lock.
    private let untrackLockHeld: @Sendable (Scope) -> Void
    /// The host-lifetime scope.
    package let singleton: Scope

    /// The request scope of the running task, if any.
    @TaskLocal static var currentRequest: Scope?
    /// The screen scope of the screen the host is calling into, if any.
    @TaskLocal static var currentScreen: Scope?

    /// An empty registry with its singleton scope; no session is open.
    @_spi(Engine) public init() {
        singleton = Scope(kind: .singleton, name: .text("host"), owner: "host", lock: lock)
        untrackLockHeld = { [live] ended in live.removeLockHeld(ended) }
        track(singleton)
    }

    @inline(__always)
    private func withLock<Result, Failure: Error>(_ body: (inout State) throws(Failure) -> Result) throws(Failure) -> Result {
        try lock.whileLocked { () throws(Failure) in try body(&state) }
    }

    // MARK: Registration

    /// Registers `key` with a factory and a release (replacing an earlier registration of
    /// the same provider; a key of another provider is refused).
    func register(_ registration: Registration) throws(ScopeError) {
        try withLock { state throws(ScopeError) in
            if let slot = state.slots[registration.serviceKey], let existing = state.registrations[slot].last, existing.plugin != registration.plugin {
                throw ScopeError(.duplicate, key: registration.key, "already provided by \(existing.plugin)")
            }
            guard !state.making.contains(registration.provider) else {
                state.held.removeAll { $0.provider == registration.provider && $0.serviceKey == registration.serviceKey }
                state.held.append(registration)
                return
            }
            Self.putInForce(registration, in: &state)
        }
    }

    private static func putInForce(_ registration: Registration, in state: inout State) {
        let slot = state.slot(for: registration.serviceKey, type: registration.type)
        place(registration, in: &state.registrations[slot])
        state.unloaded[slot] = nil
        if registration.type != nil { state.typesByName[registration.key] = slot }
    }

    /// `plugin`'s generation `generation` is being made off the main actor: what its entry
    /// registers is held until `admit` (or dropped by `unloadProvider`).
    func holdRegistrations(plugin: String, generation: Int) {
        withLock { _ = $0.making.insert("\(plugin)#\(generation)") }
    }

    /// The generation made off the main actor is in use now: what it registered is in force.
    func admitRegistrations(plugin: String, generation: Int) {
        let provider = "\(plugin)#\(generation)"
        withLock { state in
            guard state.making.remove(provider) != nil else { return }
            for registration in state.held where registration.provider == provider { Self.putInForce(registration, in: &state) }
            state.held.removeAll { $0.provider == provider }
        }
    }

    /// Puts `registration` in its slot's list, replacing its generation's and keeping the list
    /// in generation order: in place, and in one access, so `registrations`' observer runs once.
    private static func place(_ registration: Registration, in list: inout [Registration]) {
        list.removeAll { $0.generation == registration.generation }
        let position = list.firstIndex { $0.generation > registration.generation } ?? list.endIndex
        list.insert(registration, at: position)
    }

    /// Registers a Swift type for the host (an embedding app): `key` defaults to the type.
    @_spi(Engine) public func registerScoped<T: AnyObject & Sendable>(_ type: T.Type, scope: ScopeKind, key: String? = nil,
                                                        factory: @escaping @Sendable () throws -> T) throws(ScopeError) {
        try register(Registration(key: key ?? Self.key(for: type), type: key == nil ? ObjectIdentifier(type) : nil,
                                  kind: scope, plugin: "host", generation: 0, make: .sync { .object(try factory()) }, release: { _ in }))
    }

    /// Registers a Swift type with an async factory; resolves in one scope share one call.
    package func registerAsyncScoped<T: AnyObject & Sendable>(_ type: T.Type, scope: ScopeKind, key: String? = nil,
                                                             factory: @escaping @Sendable () async throws -> T) throws(ScopeError) {
        try register(Registration(key: key ?? Self.key(for: type), type: key == nil ? ObjectIdentifier(type) : nil,
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
    /// An instance already made is found under the one lock by the type's slot (one
    /// multiply, one probe, one array read): no string is built, nothing is hashed or
    /// allocated and, for a type key, no dynamic cast is made.
    @_spi(Engine) public func resolve<T: AnyObject>(_ type: T.Type, key: String? = nil, screen: Scope? = nil) throws(ScopeError) -> T {
        if key == nil, let cached = cachedObject(of: ObjectIdentifier(type), screen: screen) {
            // A type key's factory was registered for exactly `T` (registerScoped).
            return unsafeDowncast(cached, to: T.self)
        }
        let serviceKey = key.map(ServiceKey.named) ?? .type(type)
        let object: AnyObject
        switch try lookup(serviceKey, name: key ?? Self.key(for: type), screen: screen) {
        case .cached(.object(let cached), _):
            object = cached
        case .make(let registration, let slot, let scope):
            guard case .object(let made) = try make(registration, slot: slot, in: scope) else { throw Self.wrongType(T.self, key: registration.key) }
            object = made
        case .cached(.pointer, _), .cached(.workerInstance, _):
            throw Self.wrongType(T.self, key: key ?? Self.key(for: type))
        }
        // The checked cast is needed only for a key a caller chose.
        if serviceKey.isType { return unsafeDowncast(object, to: T.self) }
        guard let typed = object as? T else { throw Self.wrongType(T.self, key: key ?? Self.key(for: type)) }
        return typed
    }

    /// The cached path of `resolve`: the instance of a type key already made in its current
    /// scope, or nil (not registered, no current scope, not made yet: the full path says why).
    private func cachedObject(of type: ObjectIdentifier, screen: Scope?) -> AnyObject? {
        withLock { state in
            guard let slot = state.typeSlots[type], let kind = state.kindsInForce[slot] else { return nil }
            let cached: ScopedValue?
            switch kind {
            case .session: cached = state.sessionReference?._withUnsafeGuaranteedRef { $0.cachedValueLockHeld(slot) }
            case .singleton: cached = singleton.cachedValueLockHeld(slot)
            case .screen, .request: cached = currentScopeIfAny(of: kind, screen: screen, session: nil)?.cachedValueLockHeld(slot)
            }
            guard case .object(let object)? = cached else { return nil }
            return object
        }
    }

    /// Async form: works for sync and async factories; async ones are single-flight.
    package func resolveAsync<T: AnyObject>(_ type: T.Type, key: String? = nil, screen: Scope? = nil) async throws -> T {
        let serviceKey = key.map(ServiceKey.named) ?? .type(type)
        let value: ScopedValue
        switch try lookup(serviceKey, name: key ?? Self.key(for: type), screen: screen) {
        case .cached(let cached, _):
            value = cached
        case .make(let registration, let slot, let scope):
            switch registration.make {
            case .async(let factory):
                value = try await scope.resolveAsync(slot: slot, registration: registration, factory: factory)
            case .sync:
                value = try make(registration, slot: slot, in: scope)
            }
        }
        guard case .object(let object) = value, let typed = object as? T else {
            throw Self.wrongType(T.self, key: key ?? Self.key(for: type))
        }
        return typed
    }

    /// Resolves `key` (sync factories only) in the current scope of its kind: a plugin's
    /// key, or the name of a type the host registered. A key provided in another process
    /// than `consumer`'s, or outside its capabilities, is refused before anything is made.
    func resolve(key: String, screen: Scope?, for consumer: ServiceConsumer = .host) throws(ScopeError) -> ScopedValue {
        switch try lookup(.named(key), name: key, screen: screen, consumer: consumer) {
        case .cached(let value, _): return value
        case .make(let registration, let slot, let scope): return try make(registration, slot: slot, in: scope)
        }
    }

    /// Resolves the contract `key` for a call: as `resolve`, but from any process (the call
    /// crosses as a message), and only a registration that answers calls.
    func resolveForCall(key: String, screen: Scope?, for consumer: ServiceConsumer) throws(ScopeError) -> (ScopedValue, ContractCall, provider: String) {
        let found: (ScopedValue, Registration)
        switch try lookup(.named(key), name: key, screen: screen, consumer: consumer, forCall: true) {
        case .cached(let value, let registration): found = (value, registration)
        case .make(let registration, let slot, let scope): found = (try make(registration, slot: slot, in: scope), registration)
        }
        guard let call = found.1.call else { throw ScopeError(.acrossProcesses, key: key, "answers no calls (a C table): resolve it with service_resolve") }
        return (found.0, call, found.1.provider)
    }

    /// The plugin whose unloading (or crash) left the contract `key` without a provider.
    func unloadedProvider(of key: String) -> String? {
        withLock { state in
            (state.slots[.named(key)] ?? state.typesByName[key]).flatMap { state.unloaded[$0] }
        }
    }

    private enum Lookup {
        /// Made before, in the current scope.
        case cached(ScopedValue, Registration)
        /// Not made yet in `Scope` (which has not ended): the registration's factory runs
        /// outside the lock.
        case make(Registration, slot: Int, Scope)
    }

    /// The registration in force for `key`, its current scope and the instance already
    /// there, all under the one lock.
    private func lookup(_ key: ServiceKey, name: @autoclosure () -> String, screen: Scope?, consumer: ServiceConsumer = .host,
                        forCall: Bool = false) throws(ScopeError) -> Lookup {
        try withLock { state throws(ScopeError) -> Lookup in
            let direct = key.typeIdentity.map { state.typeSlots[$0] } ?? state.slots[key]
            let registrations = state.registrations
            let inForce = { (slot: Int) in registrations[slot].last.map { (slot, $0) } }
            guard let (slot, registration) = direct.flatMap(inForce) ?? state.typesByName[name()].flatMap(inForce) else {
                if let provider = direct.flatMap({ state.unloaded[$0] }) {
                    throw ScopeError(.providerUnloaded, key: name(), "its provider \(provider) was unloaded; nothing of it is called")
                }
                throw ScopeError(.notRegistered, key: name(), "no plugin or host registered this service")
            }
            if let denial = consumer.denial(toResolve: registration) { throw ScopeError(denied: denial, key: registration.key) }
            if forCall, registration.call == nil {
                throw ScopeError(.acrossProcesses, key: registration.key, "answers no calls (a C table): resolve it with service_resolve")
            }
            if !forCall, registration.place != consumer.place { throw Self.acrossProcesses(registration, consumer) }
            let scope = try currentScope(of: registration.kind, for: registration.key, screen: screen, session: state.session)
            if scope.isEndedLockHeld { throw ScopeError(.scopeEnded, key: registration.key, "the \(scope.kind) scope \(scope.id) has ended") }
            if let value = scope.cachedValueLockHeld(slot) { return .cached(value, registration) }
            return .make(registration, slot: slot, scope)
        }
    }

    /// Runs a sync factory (outside the lock) and keeps its instance in `scope`.
    private func make(_ registration: Registration, slot: Int, in scope: Scope) throws(ScopeError) -> ScopedValue {
        guard case .sync(let factory) = registration.make else {
            throw ScopeError(.factoryFailed, key: registration.key, "has an async factory; resolve it with resolveAsync")
        }
        let made: ScopedValue
        do { made = try factory() } catch { throw ScopeError(.factoryFailed, key: registration.key, "the factory failed: \(error)") }
        return try scope.keep(made, slot: slot, registration: registration)
    }

    /// One line naming both sides, where each runs, and the fix.
    private static func acrossProcesses(_ registration: Registration, _ consumer: ServiceConsumer) -> ScopeError {
        ScopeError(.acrossProcesses, key: registration.key,
                   "provided by \(registration.plugin) \(registration.place), but \(consumer.plugin) runs \(consumer.place); "
                       + "an instance cannot cross processes (put both in one worker group: \"isolation\": {\"group\": \"NAME\"} in each manifest)")
    }

    private static func wrongType<T>(_ type: T.Type, key: String) -> ScopeError {
        ScopeError(.wrongType, key: key, "the instance is not a \(T.self)")
    }

    /// The current scope of `kind`, or nil when none is (the cached path: no diagnostic).
    private func currentScopeIfAny(of kind: ScopeKind, screen: Scope?, session: Scope?) -> Scope? {
        switch kind {
        case .singleton: singleton
        // On a plugin's lane (a thread, not a task) the call's own scopes stand in.
        case .screen: screen ?? Self.currentScreen ?? LaneCallContext.current?.screen
        case .session: session
        case .request: Self.currentRequest ?? LaneCallContext.current?.request
        }
    }

    private func currentScope(of kind: ScopeKind, for key: String, screen: Scope?, session: Scope?) throws(ScopeError) -> Scope {
        if let scope = currentScopeIfAny(of: kind, screen: screen, session: session) { return scope }
        switch kind {
        case .singleton:
            return singleton
        case .screen:
            throw ScopeError(.noCurrentScope, key: key, "is screen-scoped but no screen is current (resolve it from a screen)")
        case .session:
            throw ScopeError(.noCurrentScope, key: key, "is session-scoped but no session is current (session begin ID)")
        case .request:
            throw ScopeError(.noCurrentScope, key: key, "is request-scoped but no request is current (resolve it while handling an action or command)")
        }
    }

    // MARK: Scopes

    /// Runs `body` in a new request scope, then ends it (releasing its instances).
    @_spi(Engine) public func withRequestScope<T>(owner: String = "host", _ body: () throws -> T) rethrows -> T {
        let scope = makeRequestScope(owner: owner)
        defer { scope.end() }
        return try Self.$currentRequest.withValue(scope, operation: body)
    }

    /// Async form: child tasks of `body` inherit the scope; detached tasks do not.
    package func withRequestScope<T>(owner: String = "host", _ body: () async throws -> T) async rethrows -> T {
        let scope = makeRequestScope(owner: owner)
        defer { scope.end() }
        return try await Self.$currentRequest.withValue(scope, operation: body)
    }

    /// One critical section: the request's number and its place among the live scopes.
    func makeRequestScope(owner: String) -> Scope {
        withLock { state in
            state.requestsStarted += 1
            let scope = Scope(kind: .request, name: .number(state.requestsStarted), owner: owner, lock: lock, onEnd: untrackLockHeld)
            live.insertRequestLockHeld(scope)
            return scope
        }
    }

    /// A new screen scope for a module instance; ended when the screen is removed for good.
    func makeScreenScope(screen: Int, owner: String) -> Scope {
        let scope = Scope(kind: .screen, name: .number(screen), owner: owner, lock: lock, onEnd: untrackLockHeld)
        track(scope)
        return scope
    }

    /// Begins session `id`, ending the current one first (its instances released).
    @_spi(Engine) public func beginSession(_ id: String) {
        let scope = Scope(kind: .session, name: .text(id), owner: "host", lock: lock, onEnd: untrackLockHeld)
        let previous = withLock { state in
            live.insertLockHeld(scope)
            defer { state.session = scope }
            return state.session
        }
        previous?.end()
    }

    /// Ends the current session, releasing every session instance. Returns its id.
    @discardableResult
    package func endSession() -> String? {
        let ended = withLock { state in
            defer { state.session = nil }
            return state.session
        }
        ended?.end()
        return ended?.id
    }

    /// The open session scope, if any.
    package var currentSession: Scope? { withLock { $0.session } }

    /// Every scope alive now (the `scopes` command; the memory checks).
    package var liveScopes: [Scope] {
        withLock { _ in live.allLockHeld }
    }

    /// Keys registered, with kind and provider.
    package var registrations: [(key: String, kind: ScopeKind, provider: String)] {
        withLock { $0.registrations.compactMap(\.last).map { ($0.key, $0.kind, $0.provider) } }.sorted { $0.key < $1.key }
    }

    /// How long a contract call waits for its provider (`IsolationSettings.serviceCallTimeout`).
    package let contractTimeout = Locked<Duration>(.seconds(10))

    /// The plugins that called each contract key (`noteCaller`), for `status`.
    private let contractCallers = Locked<[String: Set<String>]>([:])

    /// `plugin` called the contract `key` (its provider resolved for it).
    func noteCaller(_ plugin: String, of key: String) {
        contractCallers.withLock { callers in
            if callers[key]?.contains(plugin) != true { callers[key, default: []].insert(plugin) }
        }
    }

    /// Every contract in force: its key, scope kind, provider, and the plugins that called it.
    package var contracts: [(key: String, kind: ScopeKind, provider: String, callers: [String])] {
        let callers = contractCallers.withLock { $0 }
        return withLock { $0.registrations.compactMap(\.last).filter { $0.call != nil } }
            .map { ($0.key, $0.kind, $0.provider, callers[$0.key].map { $0.sorted() } ?? []) }
            .sorted { $0.key < $1.key }
    }

    /// A plugin generation is going away: every instance its factories made is released in
    /// every live scope (while its image is still loaded), its registrations are dropped
    /// unless a newer generation replaced them, and its keys then fail with "provider
    /// unloaded" instead of calling into a retired image.
    @discardableResult
    func unloadProvider(plugin: String, generation: Int) -> Int {
        let provider = "\(plugin)#\(generation)"
        let scopes: [Scope] = withLock { state in
            state.making.remove(provider)
            state.held.removeAll { $0.provider == provider }
            for (slot, list) in state.registrations.enumerated() where list.contains(where: { $0.plugin == plugin && $0.generation == generation }) {
                let remaining = list.filter { $0.generation != generation }
                state.registrations[slot] = remaining
                if remaining.isEmpty { state.unloaded[slot] = plugin }
            }
            return live.allLockHeld
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
        withLock { _ in live.insertLockHeld(scope) }
    }
}
