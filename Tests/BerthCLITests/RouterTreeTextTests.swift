import Foundation
import Testing
@_spi(Engine) import BerthRuntime
@testable import BerthCLI
import BerthTestSupport

/// `berth tree` (RouterTreeText) while a screen opens on its lane: the crasher's
/// "gate-activate" screen logs "entered activate", then waits inside its `activate` until
/// the test creates FOLDER/leave-activate. In process, or in workers, as the test matrix says.
@Suite("berth tree: a screen still opening says so") @MainActor
struct RouterTreeTextTests {
    @Test("a screen inside its activate on the lane is listed as opening, under its opener, not visible; once pushed it is active and visible")
    func openingScreen() async throws {
        let workspace = PluginWorkspace()
        let recorder = LogRecorder()
        let host = try workspace.makeCounterAndCrasherHost(recorder: recorder)
        defer { host.shutdown() }
        let gate = workspace.plugins + "/org.berth.crasher"
        defer { FileManager.default.createFile(atPath: gate + "/leave-activate", contents: nil) }
        let counter = try host.push("com.example.counter/counter", argument: Array("3600000".utf8))
        let open = Task { @MainActor in try await host.open("org.berth.crasher/gate-activate", argument: Array(gate.utf8)) }
        // Its log line, not a marker file: a sandboxed worker cannot write into the plugin's folder.
        #expect(await eventuallyAsync { !recorder.matching("entered activate").isEmpty })

        let opening = RouterTreeText.render(host)
        #expect(opening.contains("\(counter.id) com.example.counter/counter  gen 1  active  tasks 1  ◀ visible"), "\(opening)")
        #expect(opening.contains("└─ \(counter.id + 1) org.berth.crasher/gate-activate  gen 1  opening  tasks 0"), "\(opening)")
        #expect(!opening.contains("gate-activate  gen 1  opening  tasks 0  ◀ visible"), "\(opening)")

        FileManager.default.createFile(atPath: gate + "/leave-activate", contents: nil)
        let opened = try await open.value
        let pushed = RouterTreeText.render(host)
        #expect(pushed.contains("\(opened.id) org.berth.crasher/gate-activate  gen 1  active  tasks 0  ◀ visible"), "\(pushed)")
    }
}
