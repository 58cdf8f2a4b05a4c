import Foundation
import Synchronization
import Testing
@_spi(Engine) @testable import BerthRuntime
import BerthTestSupport

/// Records the order instances were released in (deinit), across threads. A `Locked`, not
/// a Mutex: these tests also run under ThreadSanitizer, which cannot see a Mutex's atomics.
final class ReleaseLog: Sendable {
    private let names = Locked<[String]>([])
    func append(_ name: String) { names.withLock { $0.append(name) } }
    var all: [String] { names.withLock { $0 } }
}

final class Probe: Sendable {
    let name: String
    let log: ReleaseLog?
    init(_ name: String, log: ReleaseLog? = nil) {
        self.name = name
        self.log = log
    }
    deinit { log?.append(name) }
}

final class OtherProbe: Sendable {
    let log: ReleaseLog?
    init(log: ReleaseLog? = nil) { self.log = log }
    deinit { log?.append("other") }
}

final class SlowProbe: Sendable {}

/// Host-only scope rules: registration, resolution, isolation, single flight, release.
@Suite("Scopes")
struct ScopeTests {
    @Test("the same instance within one scope, a different one in another")
    func sameWithinDifferentAcross() throws {
        let registry = ScopeRegistry()
        try registry.registerScoped(Probe.self, scope: .request) { Probe("p") }
        let (first, again) = try registry.withRequestScope { (try registry.resolve(Probe.self), try registry.resolve(Probe.self)) }
        let second = try registry.withRequestScope { try registry.resolve(Probe.self) }
        #expect(first === again)
        #expect(first !== second)
    }

    @Test("no current scope is a clear diagnostic, never a silent new instance")
    func noCurrentScope() throws {
        let registry = ScopeRegistry()
        try registry.registerScoped(Probe.self, scope: .request) { Probe("p") }
        try registry.registerScoped(OtherProbe.self, scope: .session) { OtherProbe() }
        #expect(throws: ScopeError.self) { try registry.resolve(Probe.self) }
        do {
            _ = try registry.resolve(OtherProbe.self)
            Issue.record("resolved without a session")
        } catch {
            #expect(error.code == .noCurrentScope)
            #expect(error.description.contains("is session-scoped but no session is current (session begin ID)"))
        }
        #expect { try registry.resolve(SlowProbe.self) } throws: { ($0 as! ScopeError).code == .notRegistered }
    }

    @Test("ending a scope releases its instances in reverse creation order")
    func reverseRelease() throws {
        let registry = ScopeRegistry()
        let log = ReleaseLog()
        try registry.registerScoped(Probe.self, scope: .request) { Probe("first", log: log) }
        try registry.registerScoped(OtherProbe.self, scope: .request) { OtherProbe(log: log) }
        try registry.withRequestScope {
            _ = try registry.resolve(Probe.self)
            _ = try registry.resolve(OtherProbe.self)
            #expect(log.all.isEmpty)
        }
        #expect(log.all == ["other", "first"])
    }

    @Test("session end releases everything; a new session gets new instances")
    func sessions() throws {
        let registry = ScopeRegistry()
        let log = ReleaseLog()
        let made = Atomic<Int>(0)
        try registry.registerScoped(Probe.self, scope: .session) { Probe("session \(made.add(1, ordering: .relaxed).newValue)", log: log) }
        registry.beginSession("alice")
        // The test keeps no reference past this closure, so only the session holds alice's.
        let aliceName: String = try {
            let alice = try registry.resolve(Probe.self)
            #expect(try registry.resolve(Probe.self) === alice)
            return alice.name
        }()
        #expect(log.all.isEmpty, "the open session holds its instance")
        registry.endSession()
        #expect(log.all == [aliceName], "ending the session released its instance")
        registry.beginSession("bob")
        let bob = try registry.resolve(Probe.self)
        #expect(bob.name != aliceName)
        registry.beginSession("carol")
        #expect(registry.currentSession?.id == "carol")
        #expect(registry.liveScopes.filter { $0.kind == .session }.map(\.id) == ["carol"])
        // The cached path follows the session in force, never the one it replaced.
        let carol = try registry.resolve(Probe.self)
        #expect(carol !== bob && carol.name != bob.name)
        #expect(try registry.resolve(Probe.self) === carol)
        registry.endSession()
        #expect(throws: ScopeError.self) { try registry.resolve(Probe.self) }
    }

    @Test("1,000 concurrent requests each see exactly one instance of their own and none of another's")
    func concurrentRequests() async throws {
        let registry = ScopeRegistry()
        let log = ReleaseLog()
        let made = Atomic<Int>(0)
        try registry.registerScoped(Probe.self, scope: .request) { Probe("\(made.add(1, ordering: .relaxed).newValue)", log: log) }
        let seen = try await withThrowingTaskGroup(of: String.self) { group in
            for _ in 0..<1000 {
                group.addTask {
                    try await registry.withRequestScope {
                        let first = try registry.resolve(Probe.self)
                        await Task.yield()
                        let second = try registry.resolve(Probe.self)
                        guard first === second else { throw ScopeError(.wrongType, key: "probe", "two instances in one request") }
                        return first.name
                    }
                }
            }
            var names: [String] = []
            for try await name in group { names.append(name) }
            return names
        }
        #expect(seen.count == 1000)
        #expect(Set(seen).count == 1000, "no request saw another's instance")
        #expect(made.load(ordering: .relaxed) == 1000)
        #expect(log.all.count == 1000, "every request's instance was released")
    }

    @Test("a child task inherits the request scope; a detached task does not")
    func childAndDetached() async throws {
        let registry = ScopeRegistry()
        try registry.registerScoped(Probe.self, scope: .request) { Probe("r") }
        try await registry.withRequestScope {
            let mine = try registry.resolve(Probe.self)
            async let child = registry.resolve(Probe.self)
            #expect(try await child === mine)
            let detached = await Task.detached { () -> ScopeError.Code? in
                do {
                    _ = try registry.resolve(Probe.self)
                    return nil
                } catch let failure as ScopeError {
                    return failure.code
                } catch {
                    return nil
                }
            }.value
            #expect(detached == .noCurrentScope)
        }
    }

    @Test("an async factory is single-flight: 100 concurrent resolves call it once")
    func singleFlight() async throws {
        let registry = ScopeRegistry()
        let calls = Atomic<Int>(0)
        try registry.registerAsyncScoped(SlowProbe.self, scope: .request) {
            calls.add(1, ordering: .relaxed)
            try await Task.sleep(for: .milliseconds(50))
            return SlowProbe()
        }
        try await registry.withRequestScope {
            let instances = try await withThrowingTaskGroup(of: ObjectIdentifier.self) { group in
                for _ in 0..<100 {
                    group.addTask { ObjectIdentifier(try await registry.resolveAsync(SlowProbe.self)) }
                }
                var identities: Set<ObjectIdentifier> = []
                for try await identity in group { identities.insert(identity) }
                return identities
            }
            #expect(instances.count == 1)
        }
        #expect(calls.load(ordering: .relaxed) == 1)
    }

    @Test("nothing is retained per scope id after 10,000 request scopes")
    func nothingRetained() throws {
        let registry = ScopeRegistry()
        let log = ReleaseLog()
        try registry.registerScoped(Probe.self, scope: .request) { Probe("r", log: log) }
        let baseline = registry.liveScopes.count
        for _ in 0..<10_000 {
            try registry.withRequestScope { _ = try registry.resolve(Probe.self) }
        }
        #expect(registry.liveScopes.count == baseline)
        #expect(log.all.count == 10_000)
    }

    @Test("resolving in an ended scope fails cleanly")
    func endedScope() throws {
        let registry = ScopeRegistry()
        try registry.registerScoped(Probe.self, scope: .session) { Probe("s") }
        registry.beginSession("x")
        let scope = try #require(registry.currentSession)
        scope.end()
        #expect { try registry.resolve(Probe.self) } throws: { ($0 as! ScopeError).code == .scopeEnded }
    }
}

@Suite("Scopes with real plugins") @MainActor
struct PluginScopeTests {
    private func plugins() async throws -> ExamplePlugins { try await ExamplePlugins.withRouteContext() }

    private func caches(_ plugins: ExamplePlugins) -> (made: [String], released: [String]) {
        (plugins.recorder.matching("profile uses image cache #").map { String($0.split(separator: "#").last ?? "") },
         plugins.recorder.matching("image cache #").filter { $0.hasSuffix("released") }.map { String($0.split(separator: "#").last?.split(separator: " ").first ?? "") })
    }

    @Test("each profile screen gets its own screen-scoped cache, released exactly when the screen closes")
    func screenScopeOnClose() async throws {
        let plugins = try await plugins()
        let host = plugins.host
        let first = try host.push("profile")
        let second = try host.push("profile")
        #expect(caches(plugins).made.count == 2)
        #expect(Set(caches(plugins).made).count == 2)
        #expect(caches(plugins).released.isEmpty)
        host.close(second)
        #expect(caches(plugins).released == [caches(plugins).made[1]])
        host.close(first)
        #expect(caches(plugins).released.count == 2)
    }

    @Test("the screen scope is released on user-driven pop, on reload and on unload")
    func screenScopeOnOtherPaths() async throws {
        let plugins = try await plugins()
        let host = plugins.host
        _ = try host.push("counter")
        _ = try host.push("profile")
        try host.userBack()
        #expect(caches(plugins).released.count == 1, "user back")
        _ = try host.push("profile")
        try host.reload("com.example.profile")
        #expect(caches(plugins).released.count == 2, "reload released the old instance's cache")
        #expect(caches(plugins).made.count == 3, "and the reopened screen got a new one")
        try host.unload("com.example.profile")
        #expect(caches(plugins).released.count == 3, "unload")
        #expect(host.scopes.liveScopes.filter { $0.kind == .screen }.count == 1, "only the counter's screen scope is left")
    }

    @Test("session-scoped instances are shared across screens and released on session end")
    func sessionAcrossScreens() async throws {
        let plugins = try await plugins()
        let host = plugins.host
        let first = try host.push("profile")
        #expect(throws: ScreenError.self) { try host.sendBlocking(screen: first.id, action: "session", payload: []) }
        #expect(plugins.recorder.matching("is session-scoped but no session is current").isEmpty == true, "the diagnostic goes to the caller")
        host.beginSession("alice")
        try host.sendBlocking(screen: first.id, action: "session", payload: [])
        let second = try host.push("profile")
        try host.sendBlocking(screen: second.id, action: "session", payload: [])
        let sessions = plugins.recorder.matching("profile is in user session #")
        #expect(sessions.count == 2)
        #expect(Set(sessions.map { $0.split(separator: "#").last! }).count == 1, "one instance for the session")
        host.endSession()
        #expect(plugins.recorder.matching("user session #").filter { $0.hasSuffix("released") }.count == 1)
    }

    @Test("a C plugin's service is resolved by key across plugins; unloading its provider releases it first, then resolves fail cleanly")
    func crossPluginServiceAndUnload() async throws {
        let plugins = try await plugins()
        let host = plugins.host
        let profile = try host.push("profile")
        try host.sendBlocking(screen: profile.id, action: "greet", payload: [])
        try host.sendBlocking(screen: profile.id, action: "greet", payload: [])
        #expect(plugins.recorder.matching("profile: Greetings, stranger (greeting #2)").count == 1, "one singleton instance")
        host.close(profile)
        try host.unload("com.example.profile")
        try host.unload("com.example.inbox")
        try host.unload("com.example.greeter")
        #expect(plugins.recorder.matching("greeting service released").count == 1)
        #expect { try host.scopes.resolve(key: "com.example.greeter/Greeting", screen: nil) } throws: { error in
            let error = error as! ScopeError
            return error.code == .providerUnloaded && error.description.contains("its provider com.example.greeter was unloaded")
        }
    }

    @Test("every action runs in a request scope of its own: one instance within an action, a new one for the next")
    func actionsInRequestScopes() async throws {
        let plugins = try await plugins()
        let host = plugins.host
        let profile = try host.push("profile")
        try host.sendBlocking(screen: profile.id, action: "request", payload: [])
        try host.sendBlocking(screen: profile.id, action: "request", payload: [])
        let probes = plugins.recorder.matching("request probe #")
        #expect(probes.count == 2)
        #expect(probes.allSatisfy { $0.hasSuffix("(same within the action: true)") })
        let numbers = probes.map { $0.split(separator: "#").last!.split(separator: " ").first! }
        #expect(Set(numbers).count == 2, "each action had its own request scope")
        #expect(host.scopes.liveScopes.filter { $0.kind == .request }.isEmpty, "both ended with their action")
    }
}
