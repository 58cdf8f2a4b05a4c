import Foundation
import Testing
@testable import BerthRuntime
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

    private func send(_ host: BerthHost, _ screen: Router, _ action: String, _ word: String) throws {
        try host.send(screen: screen.id, action: action, payload: Array(word.utf8))
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
        let host = try host()
        let screen = try host.push("scoped")
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
        let host = try host()
        let first = try host.push("scoped")
        let second = try host.push("scoped")
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

    @Test("a singleton is shared by every screen and released, before the code goes, when its provider unloads")
    func singletonUntilUnload() throws {
        let host = try host()
        let first = try host.push("scoped")
        let second = try host.push("scoped")
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
        let host = try host()
        let screen = try host.push("scoped")
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
        let host = try host()
        let screen = try host.push("scoped")
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

    @Test("Stress's resolve screen (the P10 and P11 benchmarks) resolves its screen and session services many times in one action")
    func stressResolves() throws {
        workspace.stage("stress.json")
        let host = try workspace.makeHost(recorder: recorder)
        try host.load("org.berth.stress")
        let screen = try host.push("resolve")
        try send(host, screen, "screen", "50")
        try send(host, screen, "session", "25")
        let tree = try #require(try host.render())
        #expect(tree.allNodes.compactMap { $0.fields["text"] } == ["resolved 75"])
        #expect { try send(host, screen, "other", "1") } throws: { "\($0)".contains("no action 'other'") }
    }
}
