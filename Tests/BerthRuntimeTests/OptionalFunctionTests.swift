import Foundation
import Testing
@testable import BerthRuntime
import BerthTestSupport

/// berth.h's optional table functions behave the same wherever the plugin runs: a NULL
/// `render`, `activate`, `deactivate`, `screen_event`, `save_state` or `restore_state`
/// does nothing (an empty tree for render); with a NULL `action`, `send` fails with
/// `… takes no actions` (abi.md). Runs in both modes.
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
        #expect { try host.send(screen: screen.id, action: "anything", payload: []) } throws: { error in
            "\(error)".contains("org.berth.fixtures/probe takes no actions")
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
}
