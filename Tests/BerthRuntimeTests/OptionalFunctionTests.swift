import Foundation
import Testing
@_spi(Engine) @testable import BerthRuntime
import BerthTestSupport

/// berth.h's optional table functions behave the same wherever the plugin runs: a NULL
/// `render`, `activate`, `deactivate`, `screen_event`, `save_state`, `restore_state` or
/// `unload` does nothing (an empty tree for render); with a NULL `action`, `send` fails with
/// `… takes no actions`; a NULL `context_received` or `delegate_received` makes the delivery
/// a failed event (abi.md). The omit fixture leaves out one function at a time and logs
/// every call it gets. Runs in both modes.
@Suite("Optional plugin functions, in both modes") @MainActor
struct OptionalFunctionTests {
    private let workspace = PluginWorkspace()

    @Test("a table of create and destroy only opens, refuses actions, renders nothing, reloads keeping state and closes")
    func onlyCreateAndDestroy() throws {
        // fixture_entry_longer: create and destroy, every optional function NULL.
        workspace.stageFixture(folder: "bare", entry: "fixture_entry_longer") { $0["routes"] = ["probe"] }
        let host = try workspace.makeHost()
        let generation = try host.load("org.berth.fixtures")
        #expect(!generation.handshake.functions.contains(.action) && !generation.handshake.functions.contains(.render))
        let screen = try host.push("probe")
        #expect(screen.interactor?.isActive == true, "no activate: active all the same")
        #expect { try host.sendBlocking(screen: screen.id, action: "anything", payload: []) } throws: { error in
            (error as? ScreenError)?.code == .takesNoInput && "\(error)".contains("org.berth.fixtures/probe takes no actions")
        }
        #expect(try host.render() == nil, "no render function: an empty tree")
        // The connection itself, below the host's checks: the same answers in both modes.
        let module = try #require(screen.module)
        let instance = try #require(module.instance)
        let connection = generation.connection
        try connection.action(instance, name: "anything", payload: [])
        try connection.delegateReceived(instance, from: 1, action: "picked", payload: [])
        try connection.contextReceived(instance, type: "T", payload: [])
        guard case .json(let tree) = try connection.render(instance, state: module.stateStorage) else {
            Issue.record("a plugin without render_tree renders through the v1.0 path")
            return
        }
        #expect(tree.isEmpty, "an empty tree")
        #expect(try connection.saveState(instance).isEmpty)
        try connection.restoreState(instance, [1, 2])
        let before = try #require(screen.module)
        try host.reload("org.berth.fixtures", keepState: true)
        let reopened = try #require(screen.module)
        #expect(reopened !== before && reopened.isActive, "reopened in place with a fresh instance")
        host.close(screen)
        #expect(screen.isReleased)
    }

    // MARK: One function omitted at a time (Tests/Fixtures/BerthFixtures/omit.c)

    /// A host with the omit fixture loaded from `entry` and its "omit" screen open; the
    /// plugin logs "<NAME>" for each table function the host calls.
    @MainActor
    private struct Omitting {
        let workspace = PluginWorkspace()
        let log = LogRecorder()
        let host: BerthHost
        let screen: Router

        init(_ entry: String) throws {
            workspace.stageFixture(folder: "omit", entry: entry, id: "org.berth.omit") {
                $0["routes"] = ["omit"]
                $0["abi"] = "1.1"
            }
            host = try workspace.makeHost(recorder: log)
            _ = try host.load("org.berth.omit")
            screen = try host.push("omit")
        }

        /// How many times the plugin said it was called as `function`.
        func calls(_ function: String) -> Int { log.matching("<\(function)>").count }

        /// The screen's action "child": a child screen on top, whose delegate actions it observes.
        func pushChild() throws -> Router {
            try host.sendBlocking(screen: screen.id, action: "child", payload: [])
            let child = try #require(host.visibleRouter)
            #expect(child.id != screen.id, "the child is on top")
            return child
        }

        /// The `failed` events so far, as the CLI prints them.
        var failures: [String] { host.events.filter { $0.kind == .failed }.map(\.description) }
    }

    @Test("without activate a screen opens active all the same")
    func omittedActivate() throws {
        let whole = try Omitting("omit_entry_all")
        #expect(whole.calls("activate") == 1 && whole.screen.interactor?.isActive == true)
        let omitted = try Omitting("omit_entry_activate")
        #expect(omitted.calls("activate") == 0)
        #expect(omitted.screen.interactor?.isActive == true)
        try omitted.host.sendBlocking(screen: omitted.screen.id, action: "x", payload: [])
        #expect(omitted.calls("action") == 1, "an active screen takes actions")
    }

    @Test("without deactivate a screen closes quietly: destroyed, released, nothing failed")
    func omittedDeactivate() throws {
        for (entry, deactivations) in [("omit_entry_all", 1), ("omit_entry_deactivate", 0)] {
            let opened = try Omitting(entry)
            opened.host.close(opened.screen)
            #expect(opened.calls("deactivate") == deactivations, "\(entry)")
            #expect(opened.calls("destroy") == 1 && opened.screen.isReleased, "\(entry)")
            #expect(opened.failures.isEmpty, "\(entry): \(opened.failures)")
        }
    }

    @Test("without screen_event the host still runs and logs every screen event; the plugin hears none")
    func omittedScreenEvent() throws {
        var hostEvents: [Int] = []
        for (entry, heard) in [("omit_entry_all", true), ("omit_entry_screen_event", false)] {
            let opened = try Omitting(entry)
            opened.host.close(opened.screen)
            #expect((opened.calls("screen_event") > 0) == heard, "\(entry)")
            hostEvents.append(opened.host.events.filter { $0.kind == .event && $0.subject == .screen(opened.screen.id) }.count)
        }
        #expect(hostEvents[0] > 0 && hostEvents[0] == hostEvents[1], "the same events either way: \(hostEvents)")
    }

    @Test("without action a send fails with '… takes no actions' and reaches nothing")
    func omittedAction() throws {
        let whole = try Omitting("omit_entry_all")
        try whole.host.sendBlocking(screen: whole.screen.id, action: "x", payload: [])
        #expect(whole.calls("action") == 1)
        let omitted = try Omitting("omit_entry_action")
        #expect { try omitted.host.sendBlocking(screen: omitted.screen.id, action: "x", payload: []) } throws: { error in
            (error as? ScreenError)?.code == .takesNoInput && "\(error)".contains("org.berth.omit/omit takes no actions")
        }
        #expect(omitted.calls("action") == 0)
    }

    @Test("without render_tree the host renders through render; without both, the screen draws nothing")
    func omittedRender() throws {
        let whole = try Omitting("omit_entry_all")
        _ = try whole.host.render()
        #expect(whole.calls("render_tree") > 0 && whole.calls("render") == 0, "render_tree first when there is one")
        let noTree = try Omitting("omit_entry_render_tree")
        let tree = try #require(try noTree.host.render())
        #expect(noTree.calls("render") > 0)
        #expect(tree.allNodes.compactMap { $0.fields["text"] } == ["render"], "the JSON tree render wrote")
        let nothing = try Omitting("omit_entry_render")
        #expect(try nothing.host.render() == nil, "no render function: an empty tree")
        let module = try #require(nothing.screen.module)
        let instance = try #require(module.instance)
        guard case .json(let bytes) = try module.generation.connection.render(instance, state: module.stateStorage) else {
            Issue.record("a plugin without render_tree renders through the v1.0 path")
            return
        }
        #expect(bytes.isEmpty, "nothing written at all")
        #expect(nothing.calls("render") == 0 && nothing.calls("render_tree") == 0)
        #expect(nothing.failures.isEmpty, "\(nothing.failures)")
    }

    @Test("without save_state a kept-state reload restores nothing; without restore_state the saved bytes are dropped")
    func omittedSaveAndRestore() throws {
        let whole = try Omitting("omit_entry_all")
        try whole.host.reload("org.berth.omit", keepState: true)
        #expect(whole.calls("save_state") == 1 && whole.calls("restore_state kept") == 1)
        for entry in ["omit_entry_save_state", "omit_entry_restore_state"] {
            let omitted = try Omitting(entry)
            try omitted.host.reload("org.berth.omit", keepState: true)
            #expect(omitted.calls("save_state") == (entry == "omit_entry_save_state" ? 0 : 1), "\(entry)")
            #expect(omitted.log.matching("<restore_state").isEmpty, "\(entry)")
            #expect(omitted.screen.module?.isActive == true, "\(entry): reopened in place")
            #expect(omitted.failures.isEmpty, "\(entry): \(omitted.failures)")
        }
    }

    @Test("without context_received a dispatched context is a failed event naming the function")
    func omittedContextReceived() throws {
        for (entry, received) in [("omit_entry_all", true), ("omit_entry_context_received", false)] {
            let opened = try Omitting(entry)
            try opened.host.sendBlocking(screen: opened.pushChild().id, action: "context", payload: [])
            #expect((opened.calls("context_received") > 0) == received, "\(entry)")
            #expect(opened.failures.contains { $0.contains("has no context_received") } == !received, "\(entry): \(opened.failures)")
        }
    }

    @Test("without delegate_received a delegate action is a failed event naming the function")
    func omittedDelegateReceived() throws {
        for (entry, received) in [("omit_entry_all", true), ("omit_entry_delegate_received", false)] {
            let opened = try Omitting(entry)
            try opened.host.sendBlocking(screen: opened.pushChild().id, action: "delegate", payload: [])
            #expect(opened.calls("delegate_received") == (received ? 1 : 0), "\(entry)")
            #expect(opened.failures.contains { $0.contains("has no delegate_received") } == !received, "\(entry): \(opened.failures)")
        }
    }

    @Test("without unload the plugin unloads all the same")
    func omittedUnload() async throws {
        for (entry, unloads) in [("omit_entry_all", 1), ("omit_entry_unload", 0)] {
            let opened = try Omitting(entry)
            opened.host.close(opened.screen)
            let worker = opened.host.generation(of: "org.berth.omit")?.workerPID
            try opened.host.unload("org.berth.omit")
            // In a worker the unload runs on its lane after `unload` returns: its log line is
            // in before the worker is reaped.
            if let worker { #expect(await eventuallyAsync { kill(worker, 0) != 0 }, "\(entry): the worker ended") }
            #expect(opened.calls("unload") == unloads, "\(entry)")
            #expect(opened.host.events.contains { $0.kind == .unloaded && $0.subject == .plugin("org.berth.omit") }, "\(entry)")
            // A worker ending in the background answers nothing more for the plugin; in the
            // host's process the unload's call is answered as any other.
            let asked = opened.log.matching("<unload-asked")
            if unloads == 0 {
                #expect(asked.isEmpty, "\(entry): \(asked)")
            } else if worker != nil {
                #expect(asked.count == 1 && !asked[0].contains("<unload-asked 0 ")
                        && asked[0].contains(" org.berth.omit is being unloaded: the host serves nothing more of it>"), "\(asked)")
            } else {
                #expect(asked.count == 1 && asked[0].hasSuffix(" <unload-asked 0 >"), "in process the session begins: \(asked)")
            }
        }
    }
}
