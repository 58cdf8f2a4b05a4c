import Foundation
import Testing
@_spi(Engine) @testable import BerthRuntime
import BerthTestSupport

/// The scope rules of Docs/scopes.md for a plugin's own services, with the C fixture
/// `fixture_entry_scoped` (a service of each kind). The suite runs in both modes
/// (`BERTH_TEST_ISOLATION=process`: the plugin in a worker, its instances made there, the
/// host's scopes deciding when each is released).
@Suite("Scopes of a plugin's own services, in both modes") @MainActor
struct WorkerScopeTests {
    private let workspace = PluginWorkspace()
    private let recorder = LogRecorder()

    private func host(isolation: String? = nil, isolationSettings: IsolationSettings = TestIsolation.settings) throws -> BerthHost {
        workspace.stageFixture(folder: "scoped", entry: "fixture_entry_scoped", id: "org.berth.scoped") { manifest in
            manifest["routes"] = ["scoped"]
            if let isolation { manifest["isolation"] = isolation }
        }
        let host = try workspace.makeHost(recorder: recorder, isolation: isolationSettings)
        try host.load("org.berth.scoped")
        return host
    }

    /// A host with one screen of the fixture open.
    private func oneScreen() throws -> (BerthHost, Router) {
        let host = try host()
        return (host, try host.push("scoped"))
    }

    /// A host with two screens of the fixture open, the second on top.
    private func twoScreens() throws -> (BerthHost, Router, Router) {
        let host = try host()
        return (host, try host.push("scoped"), try host.push("scoped"))
    }

    private func send(_ host: BerthHost, _ screen: Router, _ action: String, _ word: String) throws {
        try host.sendBlocking(screen: screen.id, action: action, payload: Array(word.utf8))
    }

    /// The numbers in log lines starting with `prefix` ("made screen #").
    private func numbers(_ prefix: String) -> [Int] {
        recorder.all.compactMap { line in
            guard let range = line.range(of: prefix) else { return nil }
            return Int(line[range.upperBound...].prefix { $0.isNumber })
        }
    }

    @Test("a screen's service is made from its initializer, kept while it is open, released when it closes")
    func screenScope() throws {
        let host = try host()
        let first = try host.push("scoped")
        let second = try host.push("scoped")
        #expect(numbers("made screen #").count == 2)
        #expect(numbers("created with screen #") == numbers("made screen #"))
        try send(host, second, "resolve", "screen")
        #expect(numbers("resolved screen #") == [numbers("made screen #")[1]], "the screen's own instance, once")
        #expect(numbers("released screen #").isEmpty)
        host.close(second)
        #expect(numbers("released screen #") == [numbers("made screen #")[1]])
        host.close(first)
        #expect(numbers("released screen #") == numbers("made screen #").reversed())
    }

    @Test("each action has a request scope of its own: one instance within it, released when it returns")
    func requestScope() throws {
        let (host, screen) = try oneScreen()
        try send(host, screen, "resolve", "request")
        try send(host, screen, "resolve", "request")
        #expect(recorder.matching("resolved request #").allSatisfy { $0.hasSuffix("same=1") })
        let made = numbers("made request #")
        #expect(made.count == 2 && Set(made).count == 2, "a new instance per action")
        #expect(numbers("released request #") == made, "each released when its action returned")
        #expect(host.scopes.liveScopes.filter { $0.kind == .request }.isEmpty)
    }

    @Test("a plugin begins and ends sessions: one instance per session, released when it ends")
    func sessions() throws {
        let (host, first, second) = try twoScreens()
        #expect { try send(host, first, "resolve", "session") } throws: { error in
            "\(error)".contains("is session-scoped but no session is current")
        }
        try send(host, first, "begin", "alice")
        #expect(host.scopes.currentSession?.id == "alice")
        try send(host, first, "resolve", "session")
        try send(host, second, "resolve", "session")
        let alice = numbers("resolved session #")
        #expect(alice.count == 2 && Set(alice).count == 1, "one instance for the session, shared by both screens")
        try send(host, second, "begin", "bob")
        #expect(numbers("released session #") == [alice[0]], "beginning bob ended alice")
        try send(host, second, "resolve", "session")
        try send(host, first, "end", "")
        #expect(host.scopes.currentSession == nil)
        #expect(numbers("released session #").count == 2)
        #expect(Set(numbers("made session #")).count == 2)
    }

    @Test("a resolve answered again without the host (a worker remembers it) never outlives its scope: a session replaced by the plugin, ended by the host, or ended from another thread")
    func rememberedResolvesEndWithTheirScope() throws {
        let (host, screen) = try oneScreen()
        try send(host, screen, "begin", "alice")
        try send(host, screen, "resolve", "session")
        // Replaced within one call: alice's instance is released before session_begin returns.
        try send(host, screen, "renew", "bob")
        var made = numbers("made session #")
        #expect(made.count == 2)
        let renewed = recorder.matching("renewed #")
        #expect(renewed.count == 1 && renewed[0].hasSuffix("renewed #\(made[0]) -> #\(made[1])"), "\(renewed)")
        #expect(numbers("released session #") == [made[0]])
        // Ended by the host between calls.
        host.endSession()
        #expect { try send(host, screen, "resolve", "session") } throws: { "\($0)".contains("is session-scoped but no session is current") }
        host.beginSession("carol")
        try send(host, screen, "resolve", "session")
        try send(host, screen, "resolve", "session")
        made = numbers("made session #")
        #expect(made.count == 3 && numbers("resolved session #").suffix(2) == [made[2], made[2]], "carol's own instance, made once")
        // Ended by an embedding app on another thread while the main actor waits (so no job
        // of it runs in between): released before the worker's next call.
        let scopes = host.scopes
        let ended = DispatchSemaphore(value: 0)
        Thread {
            scopes.endSession()
            ended.signal()
        }.start()
        ended.wait()
        #expect { try send(host, screen, "resolve", "session") } throws: { "\($0)".contains("is session-scoped but no session is current") }
        #expect(numbers("released session #") == made)
        host.close(screen)
        #expect(host.scopes.liveScopes.allSatisfy { $0.keys.isEmpty }, "\(host.scopes.liveScopes.map(\.keys))")
    }

    @Test("a screen's remembered resolves go with it: a screen opened later resolves its own instance, and the singleton it shares is the same")
    func rememberedResolvesOfAClosedScreen() throws {
        let host = try host()
        let first = try host.push("scoped")
        try send(host, first, "resolve", "screen")
        try send(host, first, "resolve", "singleton")
        host.close(first)
        let second = try host.push("scoped")
        try send(host, second, "resolve", "screen")
        try send(host, second, "resolve", "singleton")
        let screens = numbers("made screen #")
        #expect(screens.count == 2 && numbers("resolved screen #") == screens, "each screen its own instance")
        #expect(numbers("released screen #") == [screens[0]])
        #expect(Set(numbers("resolved singleton #")).count == 1 && numbers("made singleton #").count == 1)
    }

    @Test("ending a screen's scope leaves the session's; ending the session leaves the screens'")
    func hierarchicalClearing() throws {
        let (host, first, second) = try twoScreens()
        try send(host, second, "begin", "alice")
        try send(host, second, "resolve", "session")
        host.close(second)
        let screens = numbers("made screen #")
        #expect(numbers("released screen #") == [screens[1]], "the closed screen's instance only")
        #expect(numbers("released session #").isEmpty)
        try send(host, first, "resolve", "session")
        #expect(Set(numbers("resolved session #")).count == 1, "the session's instance goes on")
        host.endSession()
        #expect(numbers("released session #") == numbers("made session #"))
        try send(host, first, "resolve", "screen")
        #expect(numbers("resolved screen #") == [screens[0]], "the open screen's instance goes on")
        #expect(numbers("released screen #") == [screens[1]])
    }

    @Test("a singleton is shared by every screen and released, before the code goes, when its provider unloads")
    func singletonUntilUnload() throws {
        let (host, first, second) = try twoScreens()
        try send(host, first, "resolve", "singleton")
        try send(host, second, "resolve", "singleton")
        #expect(Set(numbers("resolved singleton #")).count == 1)
        host.close(second)
        host.close(first)
        #expect(numbers("released singleton #").isEmpty, "closing screens leaves the singleton")
        try host.unload("org.berth.scoped")
        #expect(numbers("released singleton #") == numbers("made singleton #"))
        #expect(host.events.contains { $0.subject == .plugin("org.berth.scoped") && $0.message.hasPrefix("released 1 scoped instance(s) of generation") })
        #expect { try host.scopes.resolve(key: "org.berth.scoped/singleton", screen: nil) } throws: { error in
            (error as? ScopeError)?.code == .providerUnloaded
        }
    }

    @Test("a reload releases the old generation's instances; the next resolve makes one with the new code")
    func reloadReleases() throws {
        let (host, screen) = try oneScreen()
        try send(host, screen, "resolve", "singleton")
        try host.reload("org.berth.scoped")
        #expect(numbers("released singleton #").count == 1)
        #expect(numbers("released screen #").count == 1, "the reopened screen's old scope ended")
        let reopened = try #require(host.openRouters.last)
        try send(host, reopened, "resolve", "singleton")
        #expect(numbers("made singleton #").count == 2)
    }

    @Test("a factory's failure reaches the resolving plugin with its message, and nothing is kept")
    func failingFactory() throws {
        let (host, screen) = try oneScreen()
        #expect { try send(host, screen, "key", "org.berth.scoped/failing") } throws: { error in
            "\(error)".contains("the factory failed") && "\(error)".contains("the failing service never makes one")
        }
        #expect(host.scopes.liveScopes.first { $0.kind == .screen }?.keys == ["org.berth.scoped/screen"])
    }

    @Test("a resolve across a process boundary is refused with one line naming both plugins, where each runs, and the fix")
    func acrossProcesses() throws {
        workspace.stage("greeter.json") { $0["isolation"] = "in-process" }
        let host = try host(isolation: "process", isolationSettings: TestIsolation.settings(.manifest(default: .process)))
        try host.load("com.example.greeter")
        let screen = try host.push("scoped")
        #expect { try send(host, screen, "key", "com.example.greeter/Greeting") } throws: { error in
            let text = "\(error)"
            return text.contains("provided by com.example.greeter in the host's process, but org.berth.scoped runs in its own worker")
                && text.contains("\"isolation\": {\"group\"") && !text.contains("\n")
        }
        #expect(recorder.matching("greeting service created").isEmpty, "nothing was made")
    }

    @Test("Stress's resolve screen (the P10 and P11 benchmarks) resolves its screen, session and request services many times in one action")
    func stressResolves() throws {
        workspace.stage("stress.json")
        let host = try workspace.makeHost(recorder: recorder)
        try host.load("org.berth.stress")
        let screen = try host.push("resolve")
        try send(host, screen, "screen", "50")
        try send(host, screen, "session", "25")
        try send(host, screen, "request", "25")
        let tree = try #require(try host.render())
        #expect(tree.allNodes.compactMap { $0.fields["text"] } == ["resolved 100"])
        #expect { try send(host, screen, "other", "1") } throws: { "\($0)".contains("no action 'other'") }
    }
}
