import Synchronization
import Testing
@_spi(Engine) @testable import BerthRuntime

/// A family of distinct types (each `Tagged<Tag>` has its own metadata) for the slot table.
final class Tagged<Tag>: Sendable {}

/// The cached path finds an instance by its type's slot: each type keeps its own slot as
/// the table grows, a key a caller chose never takes the type's path, and an instance is
/// never served from a scope that ended or by a provider that was unloaded.
@Suite("Scope slots")
struct ScopeSlotTests {
    @Test("twelve types keep one instance each, found again after the slot table grows")
    func manyTypes() throws {
        let registry = ScopeRegistry()
        registry.beginSession("s")
        func check<T: AnyObject & Sendable>(_ type: T.Type, make: @escaping @Sendable () -> T) throws -> ObjectIdentifier {
            try registry.registerScoped(type, scope: .session, factory: make)
            let first = try registry.resolve(type)
            #expect(try registry.resolve(type) === first)
            return ObjectIdentifier(first)
        }
        var made = [try check(Probe.self) { Probe("p") }, try check(OtherProbe.self) { OtherProbe() }]
        made += [try check(Tagged<Int>.self) { Tagged() }, try check(Tagged<String>.self) { Tagged() }]
        made += [try check(Tagged<Double>.self) { Tagged() }, try check(Tagged<Bool>.self) { Tagged() }]
        made += [try check(Tagged<Int8>.self) { Tagged() }, try check(Tagged<Int16>.self) { Tagged() }]
        made += [try check(Tagged<Int32>.self) { Tagged() }, try check(Tagged<UInt8>.self) { Tagged() }]
        made += [try check(Tagged<UInt16>.self) { Tagged() }, try check(Tagged<UInt32>.self) { Tagged() }]
        #expect(Set(made).count == 12)
        // Every one again, now that the table has grown past its first size.
        #expect(ObjectIdentifier(try registry.resolve(Probe.self)) == made[0])
        #expect(ObjectIdentifier(try registry.resolve(Tagged<Int>.self)) == made[2])
        #expect(ObjectIdentifier(try registry.resolve(Tagged<UInt32>.self)) == made[11])
        #expect(registry.currentSession?.keys.count == 12)
    }

    @Test("a type registered under a key a caller chose is found by that key, not by the type alone")
    func chosenKey() throws {
        let registry = ScopeRegistry()
        try registry.registerScoped(Probe.self, scope: .singleton, key: "probe") { Probe("keyed") }
        let keyed = try registry.resolve(Probe.self, key: "probe")
        #expect(try registry.resolve(Probe.self, key: "probe") === keyed)
        #expect { try registry.resolve(Probe.self) } throws: { ($0 as! ScopeError).code == .notRegistered }
        #expect { try registry.resolve(OtherProbe.self, key: "probe") } throws: { ($0 as! ScopeError).code == .wrongType }
    }

    @Test("a type made in each request is made once per request; one with an async factory is refused by the sync resolve")
    func madeOnTheFastPath() async throws {
        let registry = ScopeRegistry()
        let made = Atomic<Int>(0)
        try registry.registerScoped(Probe.self, scope: .request) { Probe("request \(made.add(1, ordering: .relaxed).newValue)") }
        for _ in 0..<3 {
            try registry.withRequestScope {
                let first = try registry.resolve(Probe.self)
                #expect(try registry.resolve(Probe.self) === first)
            }
        }
        #expect(made.load(ordering: .relaxed) == 3)
        try registry.registerAsyncScoped(OtherProbe.self, scope: .singleton) { OtherProbe() }
        #expect { try registry.resolve(OtherProbe.self) } throws: { ($0 as! ScopeError).code == .factoryFailed }
        let other = try await registry.resolveAsync(OtherProbe.self)
        #expect(try registry.resolve(OtherProbe.self) === other, "once made, the sync resolve finds it")
    }

    @Test("a cached singleton is not served once the host's scopes end")
    func endedSingleton() throws {
        let registry = ScopeRegistry()
        try registry.registerScoped(Probe.self, scope: .singleton) { Probe("one") }
        _ = try registry.resolve(Probe.self)
        registry.endAll()
        #expect { try registry.resolve(Probe.self) } throws: { ($0 as! ScopeError).code == .scopeEnded }
    }

    @Test("an unloaded provider's cached instance is released and its key then fails clearly")
    func unloadedProvider() throws {
        let registry = ScopeRegistry()
        let log = ReleaseLog()
        try registry.register(ScopeRegistry.Registration(
            key: "cache", kind: .singleton, plugin: "org.example.cache", generation: 1,
            make: .sync { .object(Probe("cache", log: log)) }, release: { _ in }
        ))
        do {
            let first = try registry.resolve(key: "cache", screen: nil)
            #expect(try registry.resolve(key: "cache", screen: nil).isSame(as: first))
        }
        #expect(registry.unloadProvider(plugin: "org.example.cache", generation: 1) == 1)
        #expect(log.all == ["cache"])
        #expect { try registry.resolve(key: "cache", screen: nil) } throws: { ($0 as! ScopeError).code == .providerUnloaded }
    }

    @Test("a key's registrations stay in generation order whatever order they come in: the newest is in force, and ending it brings back the one before")
    func registrationsInGenerationOrder() throws {
        let registry = ScopeRegistry()
        for generation in [2, 3, 1, 3] {
            try registry.register(ScopeRegistry.Registration(
                key: "cache", kind: generation == 3 ? .singleton : .session, plugin: "org.example.cache", generation: generation,
                make: .sync { .object(Probe("cache", log: ReleaseLog())) }, release: { _ in }
            ))
        }
        #expect(registry.registrations.map(\.provider) == ["org.example.cache#3"])
        #expect(registry.registrations.map(\.kind) == [.singleton])
        _ = registry.unloadProvider(plugin: "org.example.cache", generation: 3)
        #expect(registry.registrations.map(\.provider) == ["org.example.cache#2"])
        _ = registry.unloadProvider(plugin: "org.example.cache", generation: 2)
        #expect(registry.registrations.map(\.provider) == ["org.example.cache#1"])
    }

    @Test("a generation made off the main actor registers out of force: the one before answers until it is admitted; an unload drops what it held")
    func heldRegistrations() throws {
        let registry = ScopeRegistry()
        let cache = { (generation: Int) in
            ScopeRegistry.Registration(key: "cache", kind: .session, plugin: "org.example.cache", generation: generation,
                                       make: .sync { .object(Probe("cache", log: ReleaseLog())) }, release: { _ in })
        }
        try registry.register(cache(1))
        registry.holdRegistrations(plugin: "org.example.cache", generation: 2)
        try registry.register(cache(2))
        #expect(registry.registrations.map(\.provider) == ["org.example.cache#1"], "generation 2 is not in use yet")
        registry.admitRegistrations(plugin: "org.example.cache", generation: 2)
        #expect(registry.registrations.map(\.provider) == ["org.example.cache#2"])

        registry.holdRegistrations(plugin: "org.example.cache", generation: 3)
        try registry.register(cache(3))
        _ = registry.unloadProvider(plugin: "org.example.cache", generation: 3)
        registry.admitRegistrations(plugin: "org.example.cache", generation: 3)
        #expect(registry.registrations.map(\.provider) == ["org.example.cache#2"], "a generation that failed to load never comes into force")
    }

    @Test("request scopes are listed while they run, and each leaves the list when it ends, in any order")
    func liveRequests() async throws {
        let registry = ScopeRegistry()
        let baseline = registry.liveScopes.count
        registry.withRequestScope(owner: "outer") {
            registry.withRequestScope(owner: "middle") {
                registry.withRequestScope(owner: "inner") {
                    #expect(Set(registry.liveScopes.filter { $0.kind == .request }.map(\.owner)) == ["outer", "middle", "inner"])
                }
                #expect(Set(registry.liveScopes.filter { $0.kind == .request }.map(\.owner)) == ["outer", "middle"])
            }
        }
        #expect(registry.liveScopes.count == baseline)
        // Overlapping requests that end in whatever order their tasks finish.
        await withTaskGroup(of: Void.self) { group in
            for index in 0..<50 {
                group.addTask {
                    await registry.withRequestScope(owner: "task \(index)") {
                        for _ in 0..<(index % 7) { await Task.yield() }
                        #expect(registry.liveScopes.contains { $0.owner == "task \(index)" })
                    }
                }
            }
        }
        #expect(registry.liveScopes.count == baseline)
    }
}
