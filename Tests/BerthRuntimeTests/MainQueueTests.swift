import Foundation
import Testing
@_spi(Engine) @testable import BerthRuntime
import BerthTestSupport

/// A plugin's work queued on the main dispatch queue (`DispatchQueue.main.async`, a
/// `@MainActor` task) runs once the host is no longer calling it, in a worker as in
/// process.
@MainActor
@Suite("The main queue runs in both modes")
struct MainQueueTests {
    @Test("work a plugin queues on the main queue runs after the call, in each mode", arguments: ["process", "in-process"])
    func mainQueueRuns(isolation: String) async throws {
        let workspace = PluginWorkspace()
        workspace.stageCrasher(isolation: isolation)
        let host = try workspace.makeHost(isolation: TestIsolation.settings(.manifest(default: .inProcess)))
        let generation = try host.load("org.berth.crasher")
        #expect(generation.isolation.rawValue == isolation)
        #expect(try generation.call("crasher_queue_on_main", arguments: []) == .int32(0))
        #expect(try generation.call("crasher_queue_on_main", arguments: []) == .int32(0))
        var runs: FFIValue = .int32(0)
        // The host's main actor is free while this test sleeps; so is the worker.
        try await eventuallyAsync(every: .milliseconds(10)) {
            runs = try generation.call("crasher_main_queue_runs", arguments: [])
            return runs == .int32(2)
        }
        #expect(runs == .int32(2), "both queued blocks ran exactly once")
    }
}
