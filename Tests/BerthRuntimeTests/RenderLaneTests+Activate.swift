import Foundation
import Testing
@_spi(Engine) @testable import BerthRuntime
import BerthTestSupport

/// A screen opened with `BerthHost.open` activates and renders for the first time on its
/// plugin's lane (Docs/lanes.md): the host goes on meanwhile, the opener stays visible, and
/// the new screen is pushed once active. The crasher's "gate-activate" screen waits inside
/// its `activate` until the test creates a file; with FOLDER/ask-activate it asks the host
/// for work there first (a task's post to itself, a navigation).
extension RenderLaneTests {
    /// Returns once the gate screen's plugin is inside its `activate` (it said so, and the
    /// crasher's lane is in it).
    private func waitUntilInsideActivate() async throws -> Router {
        var opening: Router?
        for _ in 0..<6_000 {
            opening = host.openRouters.first { $0.route == "gate-activate" }
            if !recorder.matching("entered activate").isEmpty, opening?.module?.busyCall?.function == "activate" { break }
            try await Task.sleep(for: .milliseconds(10))
        }
        let screen = try #require(opening, "the screen was created: \(recorder.all)")
        try #require(screen.module?.busyCall?.function == "activate", "the activate reached the crasher's lane: \(recorder.all)")
        return screen
    }

    @Test("opening: while a new screen's activate runs on its lane, the opener stays visible and another screen takes actions; the screen is pushed, rendered, once active")
    func openerGoesOnWhileActivating() async throws {
        // No tick lands in the test: each would end an operation that renders the visible screen.
        let counter = try host.push("com.example.counter/counter", argument: Array("3600000".utf8))
        let (host, gate) = (host, gate)
        let open = Task { @MainActor in try await host.open("org.berth.crasher/gate-activate", argument: Array(gate.utf8)) }
        defer { openGate("activate") }
        let opening = try await waitUntilInsideActivate()

        #expect(host.visibleRouter === counter, "the opener stays visible while the new screen activates")
        try await host.send(screen: counter.id, action: "increment", payload: [])
        try await host.send(screen: counter.id, action: "report", payload: [])
        #expect(recorder.all.contains { $0.contains("count 1, ticks") }, "\(recorder.all)")
        #expect(recorder.matching("left activate").isEmpty, "still inside its activate after Counter's actions")

        openGate("activate")
        let opened = try await open.value
        #expect(opened === opening)
        #expect(host.visibleRouter === opened, "pushed once active")
        #expect(opened.module?.isActive == true)
        #expect(opened.module?.lastTree?.root?.fields["text"] == "still here", "its first render ran before the push")
        #expect(opened.module?.isBusy == false)
    }

    @Test("opening: back on the opener while the new screen activates closes both; the open fails saying so, and the new screen is released after its activate returns")
    func closedWhileActivating() async throws {
        _ = try host.push("com.example.counter/counter", argument: Array("3600000".utf8))
        let opener = try host.push("com.example.counter/counter", argument: Array("3600000".utf8))
        let (host, gate) = (host, gate)
        let open = Task { @MainActor in try await host.open("org.berth.crasher/gate-activate", argument: Array(gate.utf8)) }
        defer { openGate("activate") }
        let opening = try await waitUntilInsideActivate()

        try host.userBack()
        #expect(opener.isReleased, "back works at once on the opener")
        #expect(!host.openRouters.contains { $0 === opening }, "the opening screen left the tree with its opener")

        openGate("activate")
        do {
            _ = try await open.value
            Issue.record("an open whose screen was closed while it activated succeeded")
        } catch {
            let screenError = try #require(error as? ScreenError)
            #expect(screenError.code == .navigation)
            #expect(screenError.message.contains("screen \(opening.id) (org.berth.crasher/gate-activate) was closed while it opened"), "\(screenError.message)")
        }
        #expect(opening.isReleased)
        #expect(recorder.matching("left activate").count == 1, "its activate returned before its close sequence ran: \(recorder.all)")
        #expect(host.visibleRouter?.route == "counter")
    }

    @Test("opening: closing the half-opened screen by itself releases it; the open fails, and the opener stays")
    func closedByIDWhileActivating() async throws {
        let counter = try host.push("com.example.counter/counter", argument: Array("3600000".utf8))
        let (host, gate) = (host, gate)
        let open = Task { @MainActor in try await host.open("org.berth.crasher/gate-activate", argument: Array(gate.utf8)) }
        defer { openGate("activate") }
        let opening = try await waitUntilInsideActivate()
        #expect(host.openRouteReplay().allSatisfy { !$0.route.description.contains("gate-activate") }, "a restart would not replay it")

        host.close(opening)
        #expect(opening.isReleased, "close works at once on a screen that is still opening")
        openGate("activate")
        await #expect(throws: ScreenError.self) { _ = try await open.value }
        #expect(host.visibleRouter === counter)
        #expect(recorder.matching("left activate").count == 1)
    }

    /// Opens the gate screen (pushed, or presented) in a task of its own, and returns that
    /// task once the screen is inside its `activate`, with the screen.
    private func openGateScreen(presented: Bool = false) async throws -> (open: Task<Router, any Error>, opening: Router) {
        let (host, gate) = (host, gate)
        let open = Task { @MainActor in try await host.open("org.berth.crasher/gate-activate", argument: Array(gate.utf8), presented: presented) }
        do {
            return (open, try await waitUntilInsideActivate())
        } catch {
            openGate("activate")
            throw error
        }
    }

    /// Makes the gate screen ask the host for `asks` ("post", "pop-to-root") in its activate.
    private func askInActivate(_ asks: String) {
        #expect(FileManager.default.createFile(atPath: gate + "/ask-activate", contents: Data(asks.utf8)))
    }

    /// The crasher's lines about `markers`, in the order it logged them, each as its marker.
    private func logged(_ markers: [String]) -> [String] {
        recorder.all.compactMap { line in markers.first { line.contains($0) } }
    }

    @Test("opening: a task the new screen posts to itself during its activate on the lane runs after the push, as after push: activate, willAppear, didAppear, then the task's action")
    func taskPostedWhileActivatingRunsAfterThePush() async throws {
        _ = try host.push("com.example.counter/counter", argument: Array("3600000".utf8))
        askInActivate("post")
        let (open, opening) = try await openGateScreen()
        defer { openGate("activate") }
        // The task ran, posted and returned (its post reached the host before its end did).
        for _ in 0..<6_000 where opening.interactor?.liveTaskCount != 0 {
            try await Task.sleep(for: .milliseconds(10))
        }
        try #require(opening.interactor?.liveTaskCount == 0, "the task posted and returned while the screen activated: \(recorder.all)")
        #expect(recorder.matching("ran asked").isEmpty, "the post waits while the screen activates")

        openGate("activate")
        let opened = try await open.value
        #expect(host.visibleRouter === opened)
        // The post goes to the screen's lane once it is pushed, and the host goes on.
        for _ in 0..<6_000 where recorder.matching("ran asked").isEmpty {
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(logged(["left activate", "event 2", "event 3", "ran asked"]) == ["left activate", "event 2", "event 3", "ran asked"],
                "the post ran after the push's willAppear (2) and didAppear (3): \(recorder.all)")
    }

    @Test("opening: a popToRoot the new screen asked for during its activate is dropped when the open fails; its opener stays, and one event says so")
    func requestsOfAFailedOpenAreDropped() async throws {
        _ = try host.push("com.example.counter/counter", argument: Array("3600000".utf8))
        let opener = try host.push("com.example.counter/counter", argument: Array("3600000".utf8))
        askInActivate("pop-to-root")
        let (open, opening) = try await openGateScreen()
        defer { openGate("activate") }

        host.close(opening)
        openGate("activate")
        await #expect(throws: ScreenError.self) { _ = try await open.value }
        #expect(!opener.isReleased, "the popToRoot of a screen that never opened did not pop its opener")
        #expect(host.visibleRouter === opener)
        let dropped = host.events.filter { $0.kind == .failed && $0.subject == .screen(opening.id) }.map(\.message)
        #expect(dropped == ["dropped 1 request(s) it made while it opened: the open failed"], "\(host.events.map(\.description))")
    }

    @Test("push (blocking): what the new screen asks for in an activate that fails is dropped as with an open on the lane; its opener stays, and one event says so")
    func requestsOfAFailedBlockingPushAreDropped() throws {
        _ = try host.push("com.example.counter/counter", argument: Array("3600000".utf8))
        let opener = try host.push("com.example.counter/counter", argument: Array("3600000".utf8))
        askInActivate("pop-to-root")
        #expect(throws: ScreenError.self) { _ = try host.push("org.berth.crasher/refuse-activate", argument: Array(gate.utf8)) }
        #expect(!opener.isReleased, "the popToRoot of a screen whose activate failed did not pop its opener")
        #expect(host.visibleRouter === opener)
        let dropped = host.events.filter { $0.kind == .failed && $0.message.hasPrefix("dropped") }.map(\.message)
        #expect(dropped == ["dropped 1 request(s) it made while it opened: the open failed"], "\(host.events.map(\.description))")
    }

    @Test("push (blocking): what the new screen asks for in an activate that succeeds runs after the push (its popToRoot pops back to the root)")
    func requestsOfABlockingPushRunAfterIt() throws {
        let root = try host.push("com.example.counter/counter", argument: Array("3600000".utf8))
        _ = try host.push("com.example.counter/counter", argument: Array("3600000".utf8))
        askInActivate("pop-to-root")
        openGate("activate")
        let pushed = try host.push("org.berth.crasher/gate-activate", argument: Array(gate.utf8))
        #expect(pushed.isReleased, "its own popToRoot, run after the push, closed it")
        #expect(host.visibleRouter === root)
    }

    @Test("opening: while it activates, the new screen's snapshot is opening (not active) under its opener, outside the visible screens; once pushed it is active and visible")
    func snapshotWhileOpening() async throws {
        let counter = try host.push("com.example.counter/counter", argument: Array("3600000".utf8))
        let (open, opening) = try await openGateScreen()
        defer { openGate("activate") }

        let snapshot = try #require(host.screen(opening.id))
        #expect(snapshot.state == .opening)
        #expect(snapshot.parent == counter.id)
        #expect(!snapshot.presented)
        #expect(snapshot.busyCall?.function == "activate")
        #expect(host.screens.map(\.id) == [counter.id, opening.id])
        #expect(host.screens.first?.state == .active)
        #expect(host.visibleScreens.map(\.id) == [counter.id])

        openGate("activate")
        _ = try await open.value
        #expect(host.screen(opening.id)?.state == .active)
        #expect(host.visibleScreens.map(\.id) == [counter.id, opening.id])
    }

    @Test("opening presented: the opener takes actions while the new screen activates on its lane; the screen is presented from it once active, with created, active, willAppear and didAppear in that order")
    func presentedWhileOpenerGoesOn() async throws {
        let counter = try host.push("com.example.counter/counter", argument: Array("3600000".utf8))
        let (open, opening) = try await openGateScreen(presented: true)
        defer { openGate("activate") }

        #expect(host.visibleRouter === counter, "the opener stays visible while the new screen activates")
        #expect(counter.presentedStack == nil, "nothing is presented before the screen is active")
        #expect(host.screen(opening.id)?.state == .opening)
        #expect(host.screen(opening.id)?.presented == true)
        try await host.send(screen: counter.id, action: "increment", payload: [])
        try await host.send(screen: counter.id, action: "report", payload: [])
        #expect(recorder.all.contains { $0.contains("count 1, ticks") }, "\(recorder.all)")
        #expect(recorder.matching("left activate").isEmpty, "still inside its activate after the opener's actions")
        #expect(opening.module?.deliveredEvents == [.didLoad])

        openGate("activate")
        let opened = try await open.value
        #expect(opened === opening)
        #expect(host.visibleRouter === opened)
        #expect(opened.isPresented(from: counter), "presented from the opener")
        #expect(host.screen(opened.id)?.presented == true)
        #expect(opened.module?.lastTree?.root?.fields["text"] == "still here", "its first render ran before the presentation")
        #expect(opened.module?.deliveredEvents == [.didLoad, .willAppear(isPresentedInitially: true), .didAppear(isPresentedInitially: true)])
        let lifecycle = host.events.filter { $0.subject == .screen(opened.id) }.map { "\($0.kind.rawValue) \($0.kind == .event ? $0.message : "")" }
        #expect(lifecycle == ["created ", "activated ", "event willAppear(isPresentedInitially: true)", "event didAppear(isPresentedInitially: true)"],
                "\(lifecycle)")
        #expect(counter.module?.isActive == true, "the opener stays active under its modal")
    }
}
