import Foundation
import Testing
@_spi(Engine) @testable import BerthRuntime
import BerthTestSupport

/// A worker's limits go only into cgroups the host made for it (Docs/worker-limits.md). A
/// worker the host did not move is still in the host's groups: a limit written there would
/// bound the host and everything beside it (here: the test runner and the build).
@Suite("Worker limits stay in the worker's own cgroups", .blocking)
struct WorkerCgroupLimitTests {
    @Test("a worker the host made no cgroups for sets no limit on its host's: this process's memory cgroup keeps its limit")
    func noLimitOnTheHostsGroup() throws {
        let before = Self.ownMemoryLimits()
        try #require(!before.isEmpty, "this process is in a memory cgroup (v1 memory.limit_in_bytes or v2 memory.max)")
        // Started by a shell, not by the host's spawner: no cgroup of its own, as where the host can make none.
        let scripts = try ScriptFolder()
        let (shell, _) = try IsolationWorkerTests.workerBehindAShell(scripts)
        defer { shell.kill() }
        let recorder = RecordingHost()
        // A limit no cgroup here has.
        try IsolationWorkerTests.sandboxedGreeterHello(shell, recorder, memoryLimit: 300 << 20)
        #expect(Self.ownMemoryLimits() == before, "the worker wrote its limit into the host's own cgroup")
        withExtendedLifetime(recorder) {}
    }

    /// This process's memory limit files (cgroup v1 and v2), by path, with what they say.
    static func ownMemoryLimits() -> [String: String] {
        guard let membership = try? String(contentsOfFile: "/proc/self/cgroup", encoding: .utf8) else { return [:] }
        var limits: [String: String] = [:]
        for line in membership.split(separator: "\n") {
            let parts = line.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false).map(String.init)
            guard parts.count == 3 else { continue }
            let file: String
            if parts[1].split(separator: ",").contains("memory") {
                file = "/sys/fs/cgroup/memory\(parts[2])/memory.limit_in_bytes"
            } else if parts[0] == "0", parts[1].isEmpty {
                file = "/sys/fs/cgroup\(parts[2])/memory.max"
            } else {
                continue
            }
            if let text = try? String(contentsOfFile: file, encoding: .utf8) { limits[file] = text }
        }
        return limits
    }
}
