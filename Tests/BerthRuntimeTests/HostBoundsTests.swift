@_spi(Engine) import BerthRuntime
import BerthTestSupport
import Foundation
import Testing

extension PluginWorkspace {
    /// Stages the flooder fixture (Tests/Fixtures/BerthFlooder) as `id`, with `"capabilities": []`.
    @discardableResult
    func stageFlooder(id: String = "org.berth.flooder", manifest extra: [String: Any] = [:]) -> String {
        let folder = (plugins as NSString).appendingPathComponent(id)
        try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try? FileManager.default.copyItem(atPath: BuildProducts.library("libBerthFlooder.so"), toPath: folder + "/libBerthFlooder.so")
        write(manifest: [
            "id": id, "name": "Flooder", "version": "1.0.0", "abi": "1.0", "library": "libBerthFlooder.so",
            "entry": "berth_flooder_entry_v1", "runtime": "c", "routes": ["flood"], "capabilities": [String](),
            "exports": [["symbol": "flooder_forged_member", "params": [String](), "returns": "int32"]],
        ].merging(extra) { _, new in new }, in: folder)
        return folder
    }
}

/// The host's resident memory now (`VmRSS`), in bytes.
func residentBytes() -> Int {
    let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
    let line = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") } ?? ""
    return (Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0) * 1024
}

/// The host bounded against what a plugin sends (Docs/security.md, "The host bounded"):
/// the state it holds for a plugin and the log lines it prints for it, in both isolation
/// modes (`BERTH_TEST_ISOLATION`).
@MainActor
@Suite("The host bounded against a plugin", .serialized)
struct HostBoundsTests {
    let workspace = PluginWorkspace()
    let recorder = LogRecorder()

    private func flooder(manifest extra: [String: Any] = [:]) throws -> (BerthHost, Router) {
        workspace.stageFlooder(manifest: extra)
        let host = try workspace.makeHost(recorder: recorder)
        try host.load("org.berth.flooder")
        return (host, try host.push("flood"))
    }

    @Test("state_write past the plugin's budget is refused in one line with an event, and the host's memory stays within budget and margin")
    func stateFlood() throws {
        let (host, screen) = try flooder()
        let before = residentBytes()
        var refusal: String?
        do {
            // 200 writes of 1 MiB each: 12 times the default budget of 16 MiB.
            try host.sendBlocking(screen: screen.id, action: "state-flood", payload: Array("200".utf8))
        } catch {
            refusal = "\(error)"
        }
        let grown = residentBytes() - before
        let budget = try #require(host.generation(of: "org.berth.flooder")?.stateBudget)
        #expect(budget.byteLimit == 16 << 20)
        #expect(budget.bytes <= budget.byteLimit && budget.bytes > budget.byteLimit - (2 << 20), "\(budget.usage)")
        #expect(budget.refusedWrites >= 184, "\(budget.refusedWrites) refused")
        #expect(grown < budget.byteLimit + (48 << 20), "the host grew by \(grown >> 20) MiB")
        let events = host.events.filter { $0.kind == .denied && $0.subject == .plugin("org.berth.flooder") }
        #expect(events.count == 1, "one event, not one a write: \(events.map(\.message))")
        let line = events.first?.message ?? ""
        #expect(line.contains("org.berth.flooder holds 15 MiB in 15 slot(s)") && line.contains("over its budget of 16 MiB and 65536 slots") && !line.contains("\n"), "\(line)")
        if host.generation(of: "org.berth.flooder")?.isolation == .inProcess {
            // In process the plugin hears the refusal; a worker's state_write is one-way.
            #expect(refusal?.contains("over its budget of 16 MiB") == true, "\(refusal ?? "no error")")
        }
    }

    @Test("limits.state and limits.stateSlots set the budget; a manifest value outside the range is refused")
    func stateLimitsField() throws {
        let (host, screen) = try flooder(manifest: ["limits": ["state": "4 MiB", "stateSlots": 16] as [String: Any]])
        _ = try? host.sendBlocking(screen: screen.id, action: "state-flood", payload: Array("10".utf8))
        let budget = try #require(host.generation(of: "org.berth.flooder")?.stateBudget)
        #expect(budget.byteLimit == 4 << 20 && budget.slotLimit == 16, "\(budget.usage)")
        #expect(budget.bytes <= 4 << 20 && budget.slots == 3 && budget.refusedWrites == 7, "\(budget.usage)")
        let bad = PluginWorkspace()
        bad.stageFlooder(manifest: ["limits": ["state": "4 GiB"]])
        let problems = PluginDiscovery.scan([bad.plugins]).rejected.flatMap(\.problems).map(\.description)
        #expect(problems.contains { $0.contains("limits.state") && $0.contains("outside 4 KiB...1 GiB") }, "\(problems)")
    }

    @Test("a 1 MB log line is cut to the line budget with the count of bytes dropped")
    func longLines() throws {
        let (host, screen) = try flooder()
        try host.sendBlocking(screen: screen.id, action: "log-flood", payload: Array("3".utf8))
        let lines = recorder.matching("bytes dropped)")
        #expect(lines.count == 3, "\(lines.count) cut lines")
        let line = lines.first ?? ""
        // 16 KiB kept of 1,000,000 bytes (the expectations are Bools: a failure must not print the line).
        let (tail, head) = (String(line.suffix(60)), String(line.prefix(40)))
        let counted = line.hasSuffix("… (983,616 bytes dropped)"), printedBytes = line.utf8.count, attributed = line.hasPrefix("[org.berth.flooder#1] line 0 ")
        #expect(counted, "\(tail)")
        #expect(printedBytes < 17 << 10, "\(printedBytes) bytes printed")
        #expect(attributed, "\(head)")
    }

    @Test("log lines beyond the rate budget are dropped, and lines say how many")
    func burst() async throws {
        let (host, screen) = try flooder(manifest: ["limits": ["logRate": 10]])
        try host.sendBlocking(screen: screen.id, action: "log-burst", payload: Array("2000".utf8))
        // The bucket refills in a second: the next line gets through and reports the rest.
        try await Task.sleep(for: .milliseconds(1200))
        try host.sendBlocking(screen: screen.id, action: "log-burst", payload: Array("1".utf8))
        let printed = recorder.matching("] line ").count
        #expect(printed < 1000, "\(printed) of 2001 printed at 10 a second")
        let told = recorder.matching("line(s) dropped: over the plugin's log rate of 10 a second (limits.logRate)")
        #expect(!told.isEmpty, "\(recorder.all.suffix(3))")
        let dropped = told.compactMap { Int($0.split(separator: "] ").last?.split(separator: " ").first ?? "") }.reduce(0, +)
        #expect(dropped + printed == 2001, "\(dropped) dropped + \(printed) printed")
    }
}
