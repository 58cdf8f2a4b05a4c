import Foundation
import Testing
@_spi(Engine) @testable import BerthRuntime
import BerthTestSupport

/// A long-lived host keeps one worker started ahead of need and hands it the next load.
@MainActor
@Suite("Workers started ahead of need", .serialized)
struct WorkerPoolTests {
    @Test("a reload takes the waiting worker, and another is started for the next one")
    func reloadTakesTheWaitingWorker() async throws {
        let workspace = PluginWorkspace()
        let (host, settings, waiting) = try await hostWithAWaitingWorker(workspace)
        let executable = settings.resolvedWorkerExecutable
        _ = try host.push("ok")

        let reloaded = try host.reload("org.berth.crasher")
        #expect(reloaded.workerPID == waiting, "the new generation runs in the worker that was waiting")
        #expect(try reloaded.call("crasher_add", arguments: [.int32(40), .int32(2)]) == .int32(42))
        #expect(host.visibleRouter?.module?.isActive == true, "the open screen moved into it")
        let next = try await waitForWaitingWorker(executable, of: host)
        #expect(next != waiting)
    }

    @Test("shutdown ends the host's waiting worker, and no other host sees it")
    func shutdownDrainsTheWaitingWorker() async throws {
        let workspace = PluginWorkspace()
        let (host, settings, waiting) = try await hostWithAWaitingWorker(workspace)
        let executable = settings.resolvedWorkerExecutable
        let other = try workspace.makeHost(isolation: settings)
        #expect(other.generations.workerPool.waitingWorker(of: executable) == nil, "each host has its own pool")
        #expect(kill(waiting, 0) == 0, "alive before shutdown (the control)")
        host.shutdown()
        #expect(host.generations.workerPool.waitingWorker(of: executable) == nil)
        // Reaped by the drain, so the pid no longer names a process (or a zombie).
        #expect(kill(waiting, 0) == -1 && errno == ESRCH)
        other.shutdown()
    }

    /// A host over `workspace` (the crasher staged, isolated) that keeps a worker ready,
    /// once the crasher is loaded and a worker waits: the host, its settings, that worker.
    private func hostWithAWaitingWorker(_ workspace: PluginWorkspace) async throws -> (BerthHost, IsolationSettings, Int32) {
        workspace.stageCrasher(isolation: "process")
        var settings = TestIsolation.settings(.manifest(default: .inProcess))
        settings.keepWorkerReady = true
        let host = try workspace.makeHost(isolation: settings)
        try host.load("org.berth.crasher")
        return (host, settings, try await waitForWaitingWorker(settings.resolvedWorkerExecutable, of: host))
    }

    private func waitForWaitingWorker(_ executable: String, of host: BerthHost) async throws -> Int32 {
        var pid: Int32?
        await eventuallyAsync(timeout: .seconds(30)) {
            pid = host.generations.workerPool.waitingWorker(of: executable)
            return pid != nil
        }
        guard let pid else { throw TestFailure("no worker was started ahead of need within 30 s") }
        return pid
    }
}
