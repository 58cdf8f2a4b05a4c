import Foundation
import Testing
@_spi(Engine) @testable import BerthRuntime
import BerthTestSupport
import CBerth

/// Example plugins staged and loaded into one host: Counter, Greeter and Inbox, plus
/// whatever `adding` names (`routeContext` for UserPicker and Profile).
@MainActor
struct ExamplePlugins {
    let workspace: PluginWorkspace
    let recorder = LogRecorder()
    let host: BerthHost

    /// The two plugins the route-context, scope and service tests need besides the first three.
    static let routeContext = ["userpicker.json", "profile.json"]

    /// Stages the plugins off the main actor, then discovers and loads them as long main-actor
    /// work: a load (validation, shadow copy, a trial worker or the plugin's worker) holds the
    /// main actor, which every main-actor test shares, for up to seconds on a loaded machine.
    init(adding extra: [String] = [], isolation: IsolationSettings = TestIsolation.settings) async throws {
        workspace = await PluginWorkspace.staging(["counter.json", "greeter.json", "inbox.json"] + extra)
        var work = await LongMainActorWork.begin()
        defer { work.end() }
        host = try workspace.makeHost(recorder: recorder, isolation: isolation)
        for id in host.plugins.keys.sorted() {
            await work.pause()
            try host.load(id)
        }
    }

    /// Lifecycle log lines of one kind, as "screen N".
    func subjects(_ kind: HostEvent.Kind) -> [HostEvent.Subject] {
        host.events.filter { $0.kind == kind }.map(\.subject)
    }

    /// The screen events delivered to screen `id`, in order.
    func screenEvents(_ id: Int) -> [String] {
        host.events.filter { $0.kind == .event && $0.subject == .screen(id) && ($0.message.hasPrefix("will") || $0.message.hasPrefix("did")) }
            .map(\.message)
    }

    /// Asks Counter's screen `screen` for its report (`count N, ticks T, …`) until its tick
    /// count reaches `ticks` or the default deadline passes; true when it did.
    func ticksReach(_ ticks: Int, screen: Int) async throws -> Bool {
        try await eventuallyAsync(every: .milliseconds(10)) {
            recorder.clear()
            try host.sendBlocking(screen: screen, action: "report", payload: [])
            let report = try #require(recorder.matching("count 0, ticks").last)
            return (Int(report.split(separator: " ")[4].dropLast()) ?? 0) >= ticks
        }
    }

    /// Waits (polling, the main actor free in between) until `condition` holds.
    func waitUntil(_ condition: () -> Bool) async {
        await eventuallyAsync(condition)
    }
}

@Suite("1. Lifecycle forwarding") @MainActor
struct LifecycleForwardingTests {
    @Test("one screen: created → didLoad → activated, then deactivated → released on close")
    func oneScreen() async throws {
        let plugins = try await ExamplePlugins()
        let counter = try plugins.host.push("counter")
        #expect(counter.module?.deliveredEvents.first == .didLoad)
        plugins.host.close(counter)
        let kinds = plugins.host.events.filter { $0.subject == .screen(counter.id) }.map(\.kind)
        #expect(kinds.filter { [.created, .activated, .deactivated, .released].contains($0) } == [.created, .activated, .deactivated, .released])
    }

    @Test("a nested tree deactivates deepest first, then releases deepest first")
    func nestedTree() async throws {
        let plugins = try await ExamplePlugins()
        let host = plugins.host
        let root = try host.push("counter")
        let middle = try host.push("inbox")
        let top = try host.push("hello")
        let modal = try host.present("compose")
        host.close(middle)
        let order = [modal.id, top.id, middle.id].map(HostEvent.Subject.screen)
        #expect(plugins.subjects(.deactivated) == order)
        #expect(plugins.subjects(.released) == order)
        #expect(host.openRouters.map(\.id) == [root.id])
        #expect(root.interactor?.isActive == true)
    }

    @Test("activate and deactivate are idempotent, with isActive")
    func idempotent() async throws {
        let plugins = try await ExamplePlugins()
        let screen = try plugins.host.push("hello")
        let interactor = try #require(screen.interactor)
        try interactor.activate()
        #expect(interactor.isActive)
        interactor.deactivate()
        interactor.deactivate()
        #expect(!interactor.isActive)
        try interactor.activate()
        #expect(interactor.isActive)
    }
}

@Suite("2. Cancellation leak checks") @MainActor
struct CancellationLeakTests {
    @Test("managed tasks run while active and are cancelled and awaited on deactivate")
    func tasksCancelledOnDeactivate() async throws {
        let plugins = try await ExamplePlugins()
        let detector = LeakDetector()
        let id: Int
        do {
            let counter = try plugins.host.push("counter", argument: Array("5".utf8))
            id = counter.id
            #expect(counter.interactor?.liveTaskCount == 1)
            detector.track(counter)
        }
        // Ticks arrive every 5 ms as posted actions on the main actor, which every
        // main-actor test shares: ask until two have arrived, within the default deadline.
        #expect(try await plugins.ticksReach(2, screen: id))
        plugins.host.close(try #require(plugins.host.router(id)))
        await detector.expectAllReleased()
        // No tick is delivered after close: the task was cancelled and awaited. The positive
        // control: a second Counter ticks twice meanwhile, so ticks were being delivered.
        let eventsAfterClose = plugins.host.events.count
        let control = try plugins.host.push("counter", argument: Array("5".utf8))
        #expect(try await plugins.ticksReach(2, screen: control.id))
        let closedScreenEvents = plugins.host.events.dropFirst(eventsAfterClose).filter { $0.subject == .screen(id) }
        #expect(closedScreenEvents.isEmpty, "\(closedScreenEvents.map(\.description))")
    }

    @Test("a task handed to an inactive interactor is cancelled at once")
    func taskOnInactiveInteractor() async throws {
        let plugins = try await ExamplePlugins()
        let counter = try plugins.host.push("counter", argument: Array("5".utf8))
        let interactor = try #require(counter.interactor)
        interactor.deactivate()
        #expect(interactor.liveTaskCount == 0)
        let probe = TaskProbe()
        #expect(throws: ScreenError.self) { try interactor.startTask(key: "late", descriptor: probe.descriptor) }
        #expect(probe.released == 1)
        #expect(probe.ran == 0)
    }

    @Test("a task whose body returns on its own leaves the table and is released once; close releases it no more")
    func taskReturningOnItsOwn() async throws {
        let plugins = try await ExamplePlugins()
        let counter = try plugins.host.push("counter", argument: Array("1000".utf8))
        let interactor = try #require(counter.interactor)
        let probe = TaskProbe()
        try interactor.startTask(key: "once", descriptor: probe.descriptor)
        // The body returns at once; the table hears of it on the main actor, which this test shares.
        await eventuallyAsync(every: .milliseconds(2)) { interactor.liveTaskCount <= 1 }
        #expect(interactor.liveTaskCount == 1)
        #expect(probe.ran == 1)
        #expect(probe.released == 1)
        plugins.host.close(counter)
        #expect(interactor.liveTaskCount == 0)
        #expect(probe.released == 1)
    }

    @Test("1,000 open/close cycles leave 0 live tasks, routers, interactors and module instances")
    func thousandCycles() async throws {
        let plugins = try await ExamplePlugins()
        let detector = LeakDetector()
        var work = await LongMainActorWork.begin()
        defer { work.end() }
        for cycle in 0..<1000 {
            await work.pause()
            let counter = try plugins.host.push("counter", argument: Array("1000".utf8))
            detector.track(counter)
            if cycle % 2 == 0 {
                plugins.host.close(counter)
            } else {
                let hello = try plugins.host.present("hello")
                detector.track(hello)
                try plugins.host.userDismiss()
                plugins.host.close(counter)
            }
        }
        #expect(plugins.host.openRouters.isEmpty)
        #expect(plugins.host.launchRouter.children.isEmpty)
        await detector.expectAllReleased()
    }
}

@Suite("3. Reopen identity reset") @MainActor
struct ReopenIdentityTests {
    /// Those links are `unowned` (a weak one would slow every retain of a router): each must
    /// be cleared before its router can go, or reading it would trap.
    @Test("an instance forgets its router when a reload replaces it and when its screen closes")
    func instanceForgetsItsRouter() async throws {
        let plugins = try await ExamplePlugins()
        let host = plugins.host
        let counter = try host.push("counter")
        let first = try #require(counter.module)
        #expect(first.router === counter && first.screenHandle?.router === counter)
        try host.reload("com.example.counter")
        let second = try #require(counter.module)
        #expect(second !== first)
        #expect(first.router == nil, "the replaced instance no longer reaches the router")
        #expect(second.router === counter && second.screenHandle?.router === counter)
        let handle = try #require(second.screenHandle)
        host.close(counter)
        #expect(second.router == nil && second.screenHandle == nil)
        #expect(handle.router == nil && handle.module == nil, "a handle kept past the close reaches nothing")
    }

    @Test("child and grandchild routers are deallocated after close; reopen has new identities and fresh state")
    func reopenResets() async throws {
        let plugins = try await ExamplePlugins()
        let host = plugins.host
        let detector = LeakDetector()
        let firstID: Int
        do {
            let first = try host.push("counter")
            firstID = first.id
            detector.track(first)
            detector.track(try host.push("inbox"))
            detector.track(try host.push("hello"))
            try host.sendBlocking(screen: first.id, action: "increment", payload: [])
            try host.sendBlocking(screen: first.id, action: "increment", payload: [])
            host.close(first)
        }
        await detector.expectAllReleased()

        let reopened = try host.push("counter")
        #expect(reopened.id != firstID)
        #expect(detector.aliveCount == 0, "the old instance is gone, so the new one is a new identity")
        plugins.recorder.clear()
        try host.sendBlocking(screen: reopened.id, action: "report", payload: [])
        #expect(plugins.recorder.matching("count 0, ticks 0").count == 1, "\(plugins.recorder.all)")
    }
}

@Suite("4. Nested router detach safety") @MainActor
struct DetachSafetyTests {
    @Test("a duplicate attach leaves one child and one push")
    func duplicateAttach() async throws {
        let plugins = try await ExamplePlugins()
        let host = plugins.host
        let root = try host.push("counter")
        let child = try host.push("hello")
        try host.navigator.attachActivateAndPush(child)
        #expect(root.children.count == 1)
        #expect(host.navigator.launchStack.routers.count == 2)
        #expect(root.attachChild(child) == false)
    }

    @Test("detaching a child that is not attached is a no-op")
    func detachMissing() async throws {
        let plugins = try await ExamplePlugins()
        let root = try plugins.host.push("counter")
        let stranger = try plugins.host.navigator.screens.makeScreen("hello", argument: [])
        root.detachChild(stranger)
        #expect(root.children.isEmpty)
        #expect(root.interactor?.isActive == true)
        stranger.release()
    }

    @Test("closing a grandchild that is already detached does nothing")
    func grandchildAlreadyDetached() async throws {
        let plugins = try await ExamplePlugins()
        let host = plugins.host
        let root = try host.push("counter")
        let child = try host.push("inbox")
        let grandchild = try host.push("hello")
        host.close(child)
        let released = plugins.subjects(.released)
        host.close(grandchild)
        host.navigator.deactivateDetachAndPop(grandchild)
        child.detachChild(grandchild)
        #expect(plugins.subjects(.released) == released)
        #expect(host.openRouters.map(\.id) == [root.id])
    }
}

@Suite("5. User-driven pop and dismiss") @MainActor
struct UserDrivenCloseTests {
    @Test("user back releases once, onRelease runs once, a programmatic close afterwards is a no-op")
    func userBack() async throws {
        let plugins = try await ExamplePlugins()
        let host = plugins.host
        _ = try host.push("counter")
        var releases = 0
        let hello = try host.push("hello", onRelease: { releases += 1 })
        try host.userBack()
        #expect(hello.isReleased)
        #expect(releases == 1)
        host.close(hello)
        host.navigator.deactivateDetachAndPop(hello)
        host.navigator.deactivateDetachAndReleaseIfNeeded(hello)
        #expect(releases == 1)
        #expect(plugins.subjects(.released).filter { $0 == .screen(hello.id) }.count == 1)
    }

    @Test("user dismiss releases every screen of the modal once; onRelease once per screen")
    func userDismiss() async throws {
        let plugins = try await ExamplePlugins()
        let host = plugins.host
        _ = try host.push("counter")
        var releases: [Int] = []
        let compose = try host.present("compose", onRelease: { releases.append(1) })
        let hello = try host.push("hello", onRelease: { releases.append(2) })
        try host.userDismiss()
        #expect(compose.isReleased && hello.isReleased)
        #expect(releases == [2, 1])
        host.close(compose)
        host.navigator.deactivateDetachAndDismiss(compose)
        #expect(releases == [2, 1])
    }

    @Test("onRelease runs exactly once for each close path")
    func onReleasePerPath() async throws {
        let plugins = try await ExamplePlugins()
        let host = plugins.host
        _ = try host.push("counter")
        var count = 0
        let paths: [(String, () throws -> Void)] = [
            ("programmatic pop", { let r = try host.push("hello", onRelease: { count += 1 }); host.close(r) }),
            ("user back", { _ = try host.push("hello", onRelease: { count += 1 }); try host.userBack() }),
            ("programmatic dismiss", { let r = try host.present("hello", onRelease: { count += 1 }); host.close(r) }),
            ("user dismiss", { _ = try host.present("hello", onRelease: { count += 1 }); try host.userDismiss() }),
            ("pop to root", { _ = try host.push("hello", onRelease: { count += 1 }); try host.popToRoot() }),
        ]
        for (name, close) in paths {
            let before = count
            try close()
            #expect(count == before + 1, "\(name)")
        }
    }

    @Test("back on a root and dismiss without a modal are refused and change nothing")
    func nothingToClose() async throws {
        let plugins = try await ExamplePlugins()
        let root = try plugins.host.push("counter")
        #expect(throws: ScreenError.self) { try plugins.host.userBack() }
        #expect(throws: ScreenError.self) { try plugins.host.userDismiss() }
        #expect(plugins.host.openRouters.map(\.id) == [root.id])
    }
}

@Suite("6. Screen event flags") @MainActor
struct ScreenEventFlagTests {
    @Test("push: the covered screen disappears temporarily, the new one appears initially")
    func push() async throws {
        let plugins = try await ExamplePlugins()
        let a = try plugins.host.push("counter")
        #expect(plugins.screenEvents(a.id) == ["willAppear(isPresentedInitially: true)", "didAppear(isPresentedInitially: true)"])
        let b = try plugins.host.push("hello")
        #expect(plugins.screenEvents(a.id).suffix(2) == ["willDisappear(isRemovedPermanently: false)", "didDisappear(isRemovedPermanently: false)"])
        #expect(plugins.screenEvents(b.id) == ["willAppear(isPresentedInitially: true)", "didAppear(isPresentedInitially: true)"])
    }

    @Test("pop: the removed screen disappears permanently, the uncovered one reappears not initially")
    func pop() async throws {
        let plugins = try await ExamplePlugins()
        let a = try plugins.host.push("counter")
        let b = try plugins.host.push("hello")
        plugins.host.close(b)
        #expect(plugins.screenEvents(b.id).suffix(2) == ["willDisappear(isRemovedPermanently: true)", "didDisappear(isRemovedPermanently: true)"])
        #expect(plugins.screenEvents(a.id).suffix(2) == ["willAppear(isPresentedInitially: false)", "didAppear(isPresentedInitially: false)"])
    }

    @Test("the order of a transition: will-disappear, will-appear, did-disappear, did-appear")
    func order() async throws {
        let plugins = try await ExamplePlugins()
        let a = try plugins.host.push("counter")
        let b = try plugins.host.push("hello")
        let last4 = plugins.host.events.filter { $0.kind == .event && ($0.message.hasPrefix("will") || $0.message.hasPrefix("did")) }.suffix(4)
        #expect(last4.map(\.subject) == [.screen(a.id), .screen(b.id), .screen(a.id), .screen(b.id)])
        #expect(last4.map { String($0.message.prefix(6)) } == ["willDi", "willAp", "didDis", "didApp"])
    }

    @Test("present and dismiss: every screen of a dismissed modal stack is removed permanently, exactly once")
    func dismissedStack() async throws {
        let plugins = try await ExamplePlugins()
        let host = plugins.host
        let base = try host.push("counter")
        let modalRoot = try host.present("compose")
        #expect(plugins.screenEvents(base.id).suffix(2) == ["willDisappear(isRemovedPermanently: false)", "didDisappear(isRemovedPermanently: false)"])
        let inside = try host.push("hello")
        host.close(modalRoot)
        for screen in [modalRoot, inside] {
            let removals = plugins.screenEvents(screen.id).filter { $0.contains("isRemovedPermanently: true") }
            #expect(removals == ["willDisappear(isRemovedPermanently: true)", "didDisappear(isRemovedPermanently: true)"], "screen \(screen.id)")
        }
        #expect(plugins.screenEvents(base.id).suffix(2) == ["willAppear(isPresentedInitially: false)", "didAppear(isPresentedInitially: false)"])
    }

    @Test("pop to root removes every screen above the root permanently; the root reappears")
    func popToRoot() async throws {
        let plugins = try await ExamplePlugins()
        let host = plugins.host
        let root = try host.push("counter")
        let second = try host.push("inbox")
        let third = try host.push("hello")
        try host.popToRoot()
        for screen in [second, third] {
            #expect(plugins.screenEvents(screen.id).suffix(2) == ["willDisappear(isRemovedPermanently: true)", "didDisappear(isRemovedPermanently: true)"])
        }
        #expect(plugins.screenEvents(root.id).suffix(2) == ["willAppear(isPresentedInitially: false)", "didAppear(isPresentedInitially: false)"])
    }

    @Test("user-driven back and dismiss report the same flags as the programmatic transitions")
    func userDriven() async throws {
        let plugins = try await ExamplePlugins()
        let host = plugins.host
        let root = try host.push("counter")
        let pushed = try host.push("hello")
        try host.userBack()
        #expect(plugins.screenEvents(pushed.id).suffix(2) == ["willDisappear(isRemovedPermanently: true)", "didDisappear(isRemovedPermanently: true)"])
        let modal = try host.present("compose")
        try host.userDismiss()
        #expect(plugins.screenEvents(modal.id).suffix(2) == ["willDisappear(isRemovedPermanently: true)", "didDisappear(isRemovedPermanently: true)"])
        #expect(plugins.screenEvents(root.id).filter { $0.contains("isPresentedInitially: true") }.count == 2, "initial appearance is reported once (will + did)")
    }

    @Test("a screen pushed under a modal appears initially only when uncovered")
    func pushedWhileCovered() async throws {
        let plugins = try await ExamplePlugins()
        let host = plugins.host
        _ = try host.push("counter")
        let modal = try host.present("compose")
        let hidden = try host.navigator.screens.makeScreen("hello", argument: [])
        try host.navigator.attachActivateAndPush(hidden, in: host.navigator.launchStack)
        #expect(plugins.screenEvents(hidden.id).isEmpty)
        host.close(modal)
        #expect(plugins.screenEvents(hidden.id) == ["willAppear(isPresentedInitially: true)", "didAppear(isPresentedInitially: true)"])
    }
}

/// Host-side only: the planner's rules without any plugin.
@Suite("7. One render per operation") @MainActor
struct RenderPerOperationTests {
    @Test("an open renders the new screen once (appear events that call nothing back leave that render standing); an action renders it once more")
    func openRendersOnce() async throws {
        let plugins = try await ExamplePlugins()
        // Its effect ticks once an hour: a tick posted during the push (a push can take
        // seconds on a loaded machine) would be drained by the operation and render again.
        let counter = try plugins.host.push("counter", argument: Array("3600000".utf8))
        let module = try #require(counter.module)
        #expect(module.renderPasses == 1)
        try plugins.host.sendBlocking(screen: counter.id, action: "increment", payload: [])
        #expect(module.renderPasses == 2)
    }

    @Test("a render made outside an operation does not stand in for the render that ends the next one")
    func renderOutsideAnOperation() async throws {
        let plugins = try await ExamplePlugins()
        // As above: no tick may land inside the operations this test counts.
        let counter = try plugins.host.push("counter", argument: Array("3600000".utf8))
        let module = try #require(counter.module)
        _ = try module.render()
        #expect(module.renderPasses == 2)
        plugins.host.navigator.topLevel {}
        #expect(module.renderPasses == 3)
    }
}

@Suite("Screen event planner")
struct ScreenEventPlannerTests {
    typealias Planned = ScreenEventPlanner.Planned<String>

    @Test("a removed hidden screen is told it is removed permanently; nothing appears twice")
    func hiddenRemoval() {
        let events = ScreenEventPlanner.plan(visibleBefore: "top", visibleAfter: "base", removed: ["top", "hidden"], hasAppeared: { $0 != "hidden" })
        #expect(events == [
            Planned(screen: "top", event: .willDisappear(isRemovedPermanently: true)),
            Planned(screen: "hidden", event: .willDisappear(isRemovedPermanently: true)),
            Planned(screen: "base", event: .willAppear(isPresentedInitially: false)),
            Planned(screen: "top", event: .didDisappear(isRemovedPermanently: true)),
            Planned(screen: "hidden", event: .didDisappear(isRemovedPermanently: true)),
            Planned(screen: "base", event: .didAppear(isPresentedInitially: false)),
        ])
    }

    @Test("no change of the visible screen and nothing removed: no events")
    func nothing() {
        #expect(ScreenEventPlanner.plan(visibleBefore: "a", visibleAfter: "a", removed: [String](), hasAppeared: { _ in true }).isEmpty)
    }

    @Test("the first screen of an empty container appears initially")
    func firstScreen() {
        #expect(ScreenEventPlanner.plan(visibleBefore: nil, visibleAfter: "a", removed: [], hasAppeared: { _ in false }) == [
            Planned(screen: "a", event: .willAppear(isPresentedInitially: true)),
            Planned(screen: "a", event: .didAppear(isPresentedInitially: true)),
        ])
    }
}

/// A berth_task_v1 built in the test, counting what the host does with it.
final class TaskProbe: @unchecked Sendable {
    // @unchecked: the counters are only read after the host is done with the task.
    var ran = 0
    var released = 0

    var descriptor: berth_task_v1 {
        var task = berth_task_v1()
        task.struct_size = UInt32(MemoryLayout<berth_task_v1>.size)
        task.context = Unmanaged.passUnretained(self).toOpaque()
        task.run = { context, _ in Unmanaged<TaskProbe>.fromOpaque(context!).takeUnretainedValue().ran += 1 }
        task.release = { context in Unmanaged<TaskProbe>.fromOpaque(context!).takeUnretainedValue().released += 1 }
        return task
    }
}
