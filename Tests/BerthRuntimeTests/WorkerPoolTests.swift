import Foundation
import Testing
@testable import BerthRuntime
import BerthTestSupport

/// A long-lived host keeps one worker started ahead of need and hands it the next load.
@MainActor
@Suite("Workers started ahead of need", .serialized)
struct WorkerPoolTests {
    @Test("a reload takes the waiting worker, and another is started for the next one")
    func reloadTakesTheWaitingWorker() async throws {
        let workspace = PluginWorkspace()
        workspace.stageCrasher(isolation: "process")
        var settings = TestIsolation.settings(.manifest(default: .inProcess))
        settings.keepWorkerReady = true
        let executable = settings.resolvedWorkerExecutable
        let host = try workspace.makeHost(isolation: settings)
        try host.load("org.berth.crasher")
        let waiting = try await waitForWaitingWorker(executable)
        _ = try host.push("ok")

        let reloaded = try host.reload("org.berth.crasher")
        #expect(reloaded.workerPID == waiting, "the new generation runs in the worker that was waiting")
        #expect(try reloaded.call("crasher_add", arguments: [.int32(40), .int32(2)]) == .int32(42))
        #expect(host.visibleRouter?.module?.isActive == true, "the open screen moved into it")
        let next = try await waitForWaitingWorker(executable)
        #expect(next != waiting)
    }

    private func waitForWaitingWorker(_ executable: String) async throws -> Int32 {
        var pid: Int32?
        await eventuallyAsync(timeout: .seconds(30)) {
            pid = WorkerPool.shared.waitingWorker(of: executable)
            return pid != nil
        }
        guard let pid else { throw TestFailure("no worker was started ahead of need within 30 s") }
        return pid
    }
}
