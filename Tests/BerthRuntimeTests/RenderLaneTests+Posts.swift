import Foundation
import Testing
@_spi(Engine) @testable import BerthRuntime
import BerthTestSupport

/// A managed task's post runs on its plugin's lane (Docs/lanes.md): the host goes on while
/// the plugin's action runs. The crasher's "gate-action" screen, with FOLDER/ask-activate
/// saying "post", starts a task in its activate that posts the action "asked" to itself;
/// that action waits at the gate until the test creates FOLDER/leave-action.
extension RenderLaneTests {
    /// Opens the gate screen whose task posts an action that waits at the gate, and returns
    /// once the post is inside that action on the crasher's lane.
    func openScreenWithWaitingPost(asks: String = "post") async throws -> Router {
        #expect(FileManager.default.createFile(atPath: gate + "/ask-activate", contents: Data(asks.utf8)))
        let screen = try host.push("org.berth.crasher/gate-action", argument: Array(gate.utf8))
        for _ in 0..<6_000 where recorder.matching("entered action").isEmpty || screen.module?.busyCall?.function != "action 'asked'" {
            try await Task.sleep(for: .milliseconds(10))
        }
        try #require(!recorder.matching("entered action").isEmpty && screen.module?.busyCall?.function == "action 'asked'",
                     "the task's post reached the crasher's lane: \(recorder.all)")
        return screen
    }

    @Test("posts: a task's post runs on its plugin's lane; other screens take actions meanwhile; a person's action to that screen waits for the post instead of being refused")
    func postOnLane() async throws {
        // No tick lands in the test: each would end an operation that renders the visible screen.
        let counter = try host.push("com.example.counter/counter", argument: Array("3600000".utf8))
        defer { openGate("action") }
        let screen = try await openScreenWithWaitingPost()

        #expect(screen.module?.isBusy == true, "the screen is busy while its plugin runs the post")
        try await host.send(screen: counter.id, action: "increment", payload: [])
        try await host.send(screen: counter.id, action: "report", payload: [])
        #expect(recorder.all.contains { $0.contains("count 1, ticks") }, "\(recorder.all)")
        let (host, id) = (host, screen.id)
        let later = Task { @MainActor in try await host.send(screen: id, action: "asked", payload: []) }
        try await host.send(screen: counter.id, action: "increment", payload: [])
        #expect(recorder.matching("left action").isEmpty, "the post is still inside its action after Counter's actions")
        #expect(recorder.matching("ran asked").isEmpty)

        openGate("action")
        try await later.value
        #expect(recorder.matching("ran asked").count == 2, "the post's action ran, then the person's: \(recorder.all)")
        #expect(!host.events.contains { $0.kind == .failed }, "nothing was refused as busy: \(host.events.map(\.description))")
        #expect(screen.module?.isBusy == false)
    }

    @Test("posts: a person's action that waited for a task's post goes before the post queued behind it")
    func personGoesBeforeLaterPost() async throws {
        defer { openGate("action") }
        let screen = try await openScreenWithWaitingPost(asks: "post-twice")
        let (host, id) = (host, screen.id)
        let person = Task { @MainActor in try await host.send(screen: id, action: "asked", payload: []) }
        let connection = try #require(screen.module?.generation.connection)
        for _ in 0..<6_000 where connection.peopleWaiting == 0 {
            try await Task.sleep(for: .milliseconds(10))
        }
        try #require(connection.peopleWaiting == 1, "the person's send waits for the post")
        openGate("action")
        try await person.value
        for _ in 0..<6_000 where recorder.matching("ran asked-later").isEmpty {
            try await Task.sleep(for: .milliseconds(10))
        }
        let ran = recorder.all.filter { $0.contains("ran asked") }.map { $0.hasSuffix("ran asked-later") ? "later post" : "asked" }
        #expect(ran == ["asked", "asked", "later post"], "the first post, the person's action, then the later post: \(recorder.all)")
        #expect(!host.events.contains { $0.kind == .failed }, "\(host.events.map(\.description))")
    }

    @Test("posts: a synchronous call into a plugin whose task's post does not return waits a while, then is refused as busy, naming the post; the host goes on")
    func synchronousCallGivesUpOnPost() async throws {
        defer { openGate("action") }
        let screen = try await openScreenWithWaitingPost()
        do {
            _ = try host.push("org.berth.crasher/ok")
            Issue.record("the push went on while the post was still inside its action")
        } catch {
            #expect(error.message.contains("create(ok) failed: org.berth.crasher is busy: action 'asked' (screen \(screen.id))"), "\(error.message)")
        }
        #expect(host.visibleRouter === screen, "nothing was pushed")
        openGate("action")
        for _ in 0..<6_000 where screen.module?.isBusy == true {
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(recorder.matching("ran asked").count == 1, "the post returned once let go: \(recorder.all)")
        _ = try host.push("org.berth.crasher/ok")
    }

    @Test("posts: a synchronous call into a plugin whose task's post is on its lane waits for the post to return, then goes on")
    func synchronousCallWaitsForPost() async throws {
        defer { openGate("action") }
        _ = try await openScreenWithWaitingPost()
        // The main thread is about to wait in `push`, blocking: the gate opens once it does.
        let leave = gate + "/leave-action"
        Thread.detachNewThread {
            while !MainThreadWait.isWaiting { usleep(1_000) }
            _ = FileManager.default.createFile(atPath: leave, contents: nil)
        }

        let pushed = try host.push("org.berth.crasher/ok")
        #expect(recorder.matching("ran asked").count == 1, "the post returned before the push's create: \(recorder.all)")
        #expect(host.visibleRouter === pushed)
        #expect(!host.events.contains { $0.kind == .failed }, "nothing was refused as busy: \(host.events.map(\.description))")
    }
}

extension RenderLaneTests {
    @Test("posts: closing a screen whose task's post is on its lane does not wait for the post; its close sequence runs after the post, in order")
    func closeDuringPost() async throws {
        defer { openGate("action") }
        let screen = try await openScreenWithWaitingPost()
        let eventsBefore = recorder.matching("event ").count
        // Were the close to wait for the post, blocking, this thread would open the gate under
        // it: the post would then have left its action by the time the close returned.
        let (leave, closed) = (gate + "/leave-action", Locked(false))
        Thread.detachNewThread {
            while !closed.withLock({ $0 }) {
                if MainThreadWait.isWaiting { _ = FileManager.default.createFile(atPath: leave, contents: nil); return }
                usleep(1_000)
            }
        }
        try host.closeScreen(screen.id)
        closed.withLock { $0 = true }
        #expect(recorder.matching("left action").isEmpty, "the close returned while the post was still inside its action: \(recorder.all)")
        #expect(host.router(screen.id) == nil, "the screen left the tree at once")
        #expect(recorder.matching("event ").count == eventsBefore, "its removal events wait for the post: \(recorder.all)")

        openGate("action")
        for _ in 0..<6_000 where recorder.matching("event ").count == eventsBefore {
            try await Task.sleep(for: .milliseconds(10))
        }
        let lines = recorder.all
        let left = try #require(lines.firstIndex { $0.contains("left action") }, "the post returned: \(lines)")
        #expect(lines[left...].contains { $0.contains("event ") }, "the removal events ran once the post returned: \(lines)")
        #expect(lines[..<left].filter { $0.contains("event ") }.count == eventsBefore, "none before it: \(lines)")
        #expect(!host.events.contains { $0.kind == .failed }, "\(host.events.map(\.description))")
    }
}

extension RenderLaneTests {
    @Test("posts: what a screen closed during a post persists in its deferred deactivate lands; the host reads it back")
    func persistFromDeferredDeactivate() async throws {
        defer { openGate("action") }
        let screen = try await openScreenWithWaitingPost(asks: "post persist-deactivate")
        try host.closeScreen(screen.id)
        #expect(host.persistedValue(plugin: "org.berth.crasher", key: "n") == nil, "nothing persisted while the post runs")
        openGate("action")
        for _ in 0..<6_000 where recorder.matching("on deactivate").isEmpty {
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(recorder.matching("persisted on deactivate").count == 1, "\(recorder.all)")
        #expect(host.persistedValue(plugin: "org.berth.crasher", key: "n") == Array("closed".utf8))
        #expect(!host.events.contains { $0.kind == .failed }, "\(host.events.map(\.description))")
    }

    @Test("posts: a screen closed during a post, then its plugin unloaded (off the main actor): the unload waits for the post, the close sequence runs first, then the plugin goes")
    func unloadAfterCloseDuringPost() async throws {
        defer { openGate("action") }
        let screen = try await openScreenWithWaitingPost()
        let eventsBefore = recorder.matching("event ").count
        try host.closeScreen(screen.id)
        let host = host
        let unload = Task { @MainActor in try await host.unloadOffMain("org.berth.crasher") }
        let connection = try #require(screen.module?.generation.connection ?? host.generation(of: "org.berth.crasher")?.connection)
        for _ in 0..<6_000 where connection.peopleWaiting == 0 {
            try await Task.sleep(for: .milliseconds(10))
        }
        try #require(connection.peopleWaiting == 1, "the unload waits for the post")
        #expect(host.generation(of: "org.berth.crasher") != nil, "still loaded while the post runs")

        openGate("action")
        try await unload.value
        #expect(host.generation(of: "org.berth.crasher") == nil, "unloaded once the post returned")
        #expect(recorder.matching("event ").count > eventsBefore, "the closed screen's removal events ran before the unload: \(recorder.all)")
        #expect(!host.events.contains { $0.kind == .failed }, "\(host.events.map(\.description))")
    }
}

/// A delegate action or a route context a screen sends during a call on its lane is
/// delivered on each observer's lane too. The asker ("org.berth.asker", a second crasher)
/// opens a crasher screen above itself and observes it; its "gate-delegate" and
/// "gate-context" screens wait inside `delegate_received` and `context_received` until the
/// test creates FOLDER/leave-delegate or FOLDER/leave-context.
extension RenderLaneTests {
    @Test("delegates: a delegate action sent during an action is delivered on the observer's lane; other screens take actions meanwhile; the sender's send returns once it is delivered")
    func delegateOnObserversLane() async throws {
        try await expectDeliveredOnObserversLane("delegate", sent: "picked", call: "delegate 'picked' from screen ")
    }

    @Test("contexts: a route context sent during an action is delivered on the observer's lane; other screens take actions meanwhile; the sender's send returns once it is delivered")
    func contextOnObserversLane() async throws {
        try await expectDeliveredOnObserversLane("context", sent: "org.test.Pick", call: "context org.test.Pick")
    }

    @Test("delegates: a screen that sends a delegate action, then pops itself, stays open until the observer's lane has taken the action; then it closes")
    func popAfterDelegateWaitsForDelivery() async throws {
        try await expectDeliveredOnObserversLane("delegate", sent: "picked", call: "delegate 'picked' from screen ", action: "delegate-pop")
    }

    @Test("contexts: terminate's navigation waits for the context's delivery on the observer's lane; then the sender closes")
    func terminateWaitsForDelivery() async throws {
        try await expectDeliveredOnObserversLane("context", sent: "org.test.Pick", call: "context org.test.Pick", action: "terminate")
    }

    /// Counter (no tick lands in the test: each would end an operation that renders the
    /// visible screen), the asker's "gate-WHEN" screen observing (`sent`, for a context), and
    /// the crasher's screen it opened above itself; `leave` lets the gate go.
    func openObserverAndChild(_ when: String, observing sent: String) async throws -> (counter: Router, observer: Router, child: Router, leave: String) {
        // The asker's gate is its own folder: a worker sees its own plugin's folder only.
        let askerGate = workspace.stageCrasher(id: "org.berth.asker", entry: "berth_crasher_entry_asker")
        _ = try host.loadFolder(askerGate)
        let counter = try host.push("com.example.counter/counter", argument: Array("3600000".utf8))
        let observer = try host.push(try Route(parsing: "org.berth.asker/gate-\(when)"), argument: Array(askerGate.utf8))
        if when == "context" { try await host.send(screen: observer.id, action: "observe", payload: Array(sent.utf8)) }
        try await host.send(screen: observer.id, action: "open", payload: Array("org.berth.crasher/ok".utf8))
        let child = try #require(host.visibleRouter)
        try #require(child.parent === observer, "the crasher's screen is open above the asker: \(host.openRouters.map(\.route))")
        return (counter, observer, child, askerGate + "/leave-\(when)")
    }

    /// The asker's "gate-WHEN" screen observes (a context of type `sent`, or its child's
    /// delegate actions); the child sends `sent` with its action WHEN; the delivery waits
    /// inside the asker's plugin while Counter takes actions; `call` begins its busy call.
    /// With `action` (one that closes the child after sending), the child stays open and
    /// active until the delivery is over, then closes.
    private func expectDeliveredOnObserversLane(_ when: String, sent: String, call: String, action: String? = nil) async throws {
        let (counter, observer, child, leave) = try await openObserverAndChild(when, observing: sent)
        defer { _ = FileManager.default.createFile(atPath: leave, contents: nil) }

        let (host, id) = (host, child.id)
        let send = Task { @MainActor in try await host.send(screen: id, action: action ?? when, payload: Array(sent.utf8)) }
        for _ in 0..<6_000 where recorder.matching("entered \(when)").isEmpty || observer.module?.busyCall == nil {
            try await Task.sleep(for: .milliseconds(10))
        }
        try #require(!recorder.matching("entered \(when)").isEmpty, "the delivery reached the asker's lane: \(recorder.all)")
        #expect(observer.module?.busyCall?.function.hasPrefix(call) == true, "\(observer.module?.busyCall?.function ?? "not busy")")
        #expect(child.module?.isBusy == false, "the sender's lane is free")
        try await host.send(screen: counter.id, action: "increment", payload: [])
        try await host.send(screen: counter.id, action: "report", payload: [])
        #expect(recorder.all.contains { $0.contains("count 1, ticks") }, "\(recorder.all)")
        #expect(recorder.matching("received \(when)").isEmpty, "still inside the delivery after Counter's actions")
        if action != nil {
            #expect(host.router(id)?.module?.isActive == true, "the sender stays open and active while its value is delivered")
        }

        #expect(FileManager.default.createFile(atPath: leave, contents: nil))
        try await send.value
        #expect(recorder.matching("received \(when) \(sent)").count == 1, "delivered once the send returned: \(recorder.all)")
        if action != nil {
            #expect(host.router(id) == nil, "the sender closed once the delivery was over")
            #expect(host.visibleRouter === observer)
        }
        #expect(observer.module?.isBusy == false)
        #expect(!host.events.contains { $0.kind == .failed }, "\(host.events.map(\.description))")
    }
}

extension PluginConnection {
    /// How many people's calls wait for this plugin's lane (`LaneState.peopleWaiting`).
    var peopleWaiting: Int {
        switch self {
        case let plugin as InProcessPlugin: plugin.peopleWaiting
        case let plugin as IsolatedPlugin: plugin.peopleWaiting
        default: 0
        }
    }
}
