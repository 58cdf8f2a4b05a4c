import Foundation
import Testing
@_spi(Engine) @testable import BerthRuntime
import BerthTestSupport

/// A screen a plugin asks the host to open during a call on its lane opens on its own lane
/// too (Docs/lanes.md): the host, the asking screen and every other screen go on while its
/// `create` runs. A second crasher, "org.berth.asker", asks with its action "open"; the
/// crasher's "gate-create" screen waits inside its `create` until the test creates a file.
extension RenderLaneTests {
    @Test("opening: a screen a plugin asks for during an action opens on its lane; the asker and other screens take actions meanwhile; it is pushed with its promised id and its delegate observed")
    func requestedOpenOnLane() async throws {
        defer { openGate("create") }
        let (counter, asker, send) = try await askForGatedScreen()
        let promised = try #require(recorder.matching("asked to open").first?.split(separator: " ").last.flatMap { Int($0) },
                                    "the asker logged the id it was promised: \(recorder.all)")

        #expect(host.visibleRouter === asker, "the asker stays visible while the new screen is created")
        #expect(asker.module?.isBusy == false, "the asker's lane is free")
        try await host.send(screen: asker.id, action: "asked", payload: [])
        try await host.send(screen: counter.id, action: "increment", payload: [])
        try await host.send(screen: counter.id, action: "report", payload: [])
        #expect(recorder.all.contains { $0.contains("count 1, ticks") }, "\(recorder.all)")
        #expect(recorder.matching("left create").isEmpty, "still inside its create after the other screens' actions")

        openGate("create")
        try await send.value
        let opened = try #require(host.visibleRouter, "a screen is visible")
        #expect(opened.route == "gate-create", "pushed once created and active: \(host.openRouters.map(\.route))")
        #expect(opened.id == promised, "with the id the asker was promised")
        #expect(opened.parent === asker, "above the asker")
        #expect(opened.delegateObservers.contains { $0.screen === asker }, "the asker observes its delegate actions, asked before it was open")
        #expect(opened.module?.isActive == true)
    }

    @Test("opening: a screen a plugin asks for that fails to open leaves the asker visible and says so on the asker")
    func requestedOpenThatFails() async throws {
        _ = try host.loadFolder(workspace.stageCrasher(id: "org.berth.asker", entry: "berth_crasher_entry_asker"))
        let asker = try host.push("org.berth.asker/ok")
        try await host.send(screen: asker.id, action: "open", payload: Array("org.berth.crasher/refuse-activate \(gate)".utf8))
        #expect(host.visibleRouter === asker, "the asker stays")
        let failed = host.events.filter { $0.kind == .failed && $0.subject == .screen(asker.id) }.map(\.message)
        #expect(failed.count == 1 && failed[0].hasPrefix("push org.berth.crasher/refuse-activate failed: "), "\(host.events.map(\.description))")
        #expect(host.events.contains { $0.kind == .failed && $0.message == "dropped 1 request(s) it made while it opened: the open failed" },
                "the asker's observing of the screen that never opened is dropped with it: \(host.events.map(\.description))")
    }

    @Test("opening: a screen a plugin asks to present during an action opens on its lane and is presented from the asker, with its promised id")
    func requestedPresentOnLane() async throws {
        _ = try host.loadFolder(workspace.stageCrasher(id: "org.berth.asker", entry: "berth_crasher_entry_asker"))
        let asker = try host.push("org.berth.asker/ok")
        try await host.send(screen: asker.id, action: "present", payload: Array("org.berth.crasher/ok".utf8))
        let promised = try #require(recorder.matching("asked to open").first?.split(separator: " ").last.flatMap { Int($0) },
                                    "the asker logged the id it was promised: \(recorder.all)")
        let presented = try #require(host.visibleRouter, "a screen is visible")
        #expect(presented.route == "ok" && presented.pluginID == "org.berth.crasher", "\(host.openRouters.map(\.route))")
        #expect(presented.id == promised)
        #expect(presented.stack?.isPresented == true && presented.stack?.presenter === asker, "presented from the asker, on a stack of its own")
        #expect(asker.presentedStack === presented.stack)
        #expect(presented.delegateObservers.contains { $0.screen === asker })
    }
}

extension RenderLaneTests {
    /// Counter, then the asker above it; the asker's action asks for the crasher's
    /// "gate-create" screen, and this returns once that screen's `create` waits at its gate
    /// (the action's `send` still running: the open is what it caused).
    private func askForGatedScreen() async throws -> (counter: Router, asker: Router, send: Task<Void, any Error>) {
        _ = try host.loadFolder(workspace.stageCrasher(id: "org.berth.asker", entry: "berth_crasher_entry_asker"))
        // No tick lands in the test: each would end an operation that renders the visible screen.
        let counter = try host.push("com.example.counter/counter", argument: Array("3600000".utf8))
        let asker = try host.push("org.berth.asker/ok")
        let (host, gate) = (host, gate)
        let send = Task { @MainActor in
            try await host.send(screen: asker.id, action: "open", payload: Array("org.berth.crasher/gate-create \(gate)".utf8))
        }
        for _ in 0..<6_000 where recorder.matching("entered create").isEmpty {
            try await Task.sleep(for: .milliseconds(10))
        }
        try #require(!recorder.matching("entered create").isEmpty, "the requested screen's create began: \(recorder.all)")
        return (counter, asker, send)
    }

    @Test("opening: a screen a plugin asked for whose asker closes while it is created is released; the open fails, saying so on the asker, and nothing is pushed")
    func requestedOpenWhoseAskerCloses() async throws {
        defer { openGate("create") }
        let (counter, asker, send) = try await askForGatedScreen()

        host.close(asker)
        #expect(asker.isReleased && host.visibleRouter === counter)
        openGate("create")
        _ = try? await send.value
        #expect(host.visibleRouter === counter, "nothing was pushed: \(host.openRouters.map(\.route))")
        #expect(!host.openRouters.contains { $0.route == "gate-create" }, "the new screen was released")
        let failed = host.events.filter { $0.kind == .failed && $0.subject == .screen(asker.id) }.map(\.message)
        #expect(failed.count == 1 && failed[0].hasPrefix("push org.berth.crasher/gate-create failed: "), "\(host.events.map(\.description))")
    }
}
