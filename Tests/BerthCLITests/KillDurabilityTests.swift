import Foundation
import Testing
@_spi(Engine) @testable import BerthRuntime
import BerthTestSupport

/// `berth run` killed with SIGKILL at random moments while a plugin persists a counter,
/// over many cycles: after each kill, every value the host committed (the plugin logs
/// "committed V" once persist_write has returned, and the host answers only after the
/// SQLite commit) is in the database, the database opens and passes its integrity check,
/// and the next host resumes from it.
///
/// `BERTH_KILL_CYCLES` sets the number of cycles (default 100); `BERTH_KILL_SEED` replays
/// one run's kill moments.
@Suite("Durability under kill -9", .blocking)
struct KillDurabilityTests {
    /// A `berth run` host whose standard error is read line by line as it comes.
    final class Host: Sendable {
        let process = Process()
        private let committed = Locked<[Int]>([])
        private let resumed = Locked<Int?>(nil)
        private let finished = Locked(false)

        init(root: String, state: String) throws {
            process.executableURL = URL(fileURLWithPath: BuildProducts.berth)
            process.arguments = ["run", "--plugins", "plugins", "--state-dir", state, "--script", "-"]
            process.currentDirectoryURL = URL(fileURLWithPath: root)
            var environment = ProcessInfo.processInfo.environment
            environment["XDG_RUNTIME_DIR"] = root + "/run"
            process.environment = environment
            let input = Pipe()
            let errors = Pipe()
            process.standardInput = input
            process.standardOutput = FileHandle.nullDevice
            process.standardError = errors
            try process.run()
            // One action that writes for far longer than the host lives.
            input.fileHandleForWriting.write(Data("load org.berth.crasher\nopen ok\nsend persist 1000000000\n".utf8))
            let reader = errors.fileHandleForReading
            Thread { [self] in
                var pending = ""
                while case let data = reader.availableData, !data.isEmpty {
                    pending += String(decoding: data, as: UTF8.self)
                    while let newline = pending.firstIndex(of: "\n") {
                        record(String(pending[..<newline]))
                        pending = String(pending[pending.index(after: newline)...])
                    }
                }
                finished.withLock { $0 = true }
                try? input.fileHandleForWriting.close()
            }.start()
        }

        private func record(_ line: String) {
            guard let value = line.split(separator: " ").last.flatMap({ Int($0) }) else { return }
            if line.contains("org.berth.crasher") && line.contains("committed ") { committed.withLock { $0.append(value) } }
            if line.contains("org.berth.crasher") && line.contains("resumed at ") { resumed.withLock { $0 = value } }
        }

        var lastCommitted: Int? { committed.withLock { $0.last } }
        var commitCount: Int { committed.withLock { $0.count } }
        var resumedAt: Int? { resumed.withLock { $0 } }
        var hasFinished: Bool { finished.withLock { $0 } }

        /// Waits until `condition` holds or the host ends; false on a timeout (a deadline for
        /// a loaded machine, where a host and its worker have taken over 30 s to start).
        func wait(seconds: Int = 300, until condition: () -> Bool) -> Bool {
            eventually(timeout: .seconds(seconds), every: .microseconds(500)) { condition() || hasFinished } && condition()
        }

        func killNow() {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            // Until its output closes: every line it wrote is read before the check.
            _ = wait(seconds: 120) { false }
        }
    }

    @Test("100 cycles of SIGKILL at random moments: every committed value is there and the database opens")
    func killedHostKeepsCommittedValues() throws {
        let environment = ProcessInfo.processInfo.environment
        let cycles = environment["BERTH_KILL_CYCLES"].flatMap { Int($0) } ?? 100
        let seed = environment["BERTH_KILL_SEED"].flatMap { UInt64($0) } ?? UInt64.random(in: 1...UInt64.max)
        var random = SplitMix(seed: seed)
        let workspace = PluginWorkspace()
        let folder = workspace.stageCrasher()
        // Every "committed"/"resumed at" line must reach the output: the default log rate
        // (100 lines a second, Docs/worker-limits.md) drops lines of a tight write loop.
        if let data = FileManager.default.contents(atPath: folder + "/plugin.json"),
           var manifest = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] {
            manifest["limits"] = ["logRate": 10_000]
            workspace.write(manifest: manifest, in: folder)
        }
        let state = workspace.root + "/state"
        var previous = 0
        var totalCommits = 0
        for cycle in 1...cycles {
            let host = try Host(root: workspace.root, state: state)
            // The next host resumes where the last one's database stands.
            #expect(host.wait { host.resumedAt != nil }, "cycle \(cycle) (seed \(seed)): the host did not resume")
            if let resumed = host.resumedAt {
                #expect(resumed >= previous, "cycle \(cycle) (seed \(seed)): resumed at \(resumed), but \(previous) was committed")
            }
            // Kill after 0 to 40 commits, then 0 to 3 ms more: before, during or after a write.
            let commits = Int(random.next() % 41)
            _ = host.wait { host.commitCount >= commits }
            usleep(UInt32(random.next() % 3_000))
            host.killNow()
            totalCommits += host.commitCount
            let committed = host.lastCommitted ?? previous

            let store = try PersistentStore(folder: state)
            #expect(try store.integrityCheck() == "ok", "cycle \(cycle) (seed \(seed))")
            let stored = try store.read(plugin: "org.berth.crasher", key: "n").flatMap { Int(String(decoding: $0, as: UTF8.self)) } ?? 0
            #expect(stored >= committed, "cycle \(cycle) (seed \(seed)): \(committed) was committed, the database holds \(stored)")
            #expect(stored <= committed + 1, "cycle \(cycle) (seed \(seed)): at most one write was in flight")
            previous = stored
            if stored < committed { break }
        }
        #expect(totalCommits > cycles, "the hosts committed \(totalCommits) values in \(cycles) cycles: kills came too early to test anything")
    }
}

/// A small seeded generator, so a failing run can be replayed with BERTH_KILL_SEED.
struct SplitMix: RandomNumberGenerator {
    private var state: UInt64
    init(seed: UInt64) { state = seed }
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
