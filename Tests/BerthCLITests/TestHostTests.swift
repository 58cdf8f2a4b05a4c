import Foundation
import Testing
import BerthTestSupport
@testable import BerthCLI

/// `berth test-host`, the engine of the BerthTesting kit: the same requests the kit sends, on
/// the Counter example, in both isolation modes; and the key names of the kit, the docs and
/// the engine are one list.
@Suite("berth test-host: the test kit's host", .blocking)
struct TestHostTests {
    @Test("every key the kit sends and Docs/testing-plugins.md lists is one test-host reads")
    func keyNamesAgree() throws {
        let kit = try String(contentsOfFile: BuildProducts.packageRoot + "/BerthSDK/Sources/BerthTesting/Key.swift", encoding: .utf8)
        let wireNames = kit.matches(of: #/case \.\w+: "([^"]+)"/#).map { String($0.output.1) }
        #expect(wireNames.count >= 15, "found \(wireNames)")
        let parameterised = (1...12).map { "f\($0)" } + ["ctrl-c", "ctrl-l", "+", "-", ":", "x"]
        for name in wireNames + parameterised {
            #expect(TestHostProtocol.key(named: name) != nil, "test-host does not read the key '\(name)'")
        }
        #expect(TestHostProtocol.key(named: "shift-tab") == .backTab && TestHostProtocol.key(named: "space") == .character(" "))

        let doc = try String(contentsOfFile: BuildProducts.packageRoot + "/Docs/testing-plugins.md", encoding: .utf8)
        let keysSection = try #require(doc.components(separatedBy: "## Keys").dropFirst().first?.components(separatedBy: "\n## ").first)
        let documented = Set(keysSection.matches(of: #/`\.(\w+)/#).map { String($0.output.1) })
        let declared = Set(kit.matches(of: #/case \.(\w+)/#).map { String($0.output.1) })
        #expect(documented == declared, "documented only: \(documented.subtracting(declared).sorted()); declared only: \(declared.subtracting(documented).sorted())")
    }

    @Test("test-host packs the library, then opens, taps views and actions by label, steps by key and reports a wrong label", arguments: ["in-process", "process"])
    func drivesCounter(_ isolation: String) throws {
        let workspace = PluginWorkspace()
        let folder = workspace.stage("counter.json")
        let host = try TestHostSession(package: folder, library: folder + "/libCounter.so", isolation: isolation, log: workspace.root + "/test-host.log")
        defer { host.end() }

        let start = try host.reply(to: nil)
        #expect(start["text"]?.contains("com.example.counter/counter") == true, "\(start)")
        // A tick interval long enough that no tick lands between two frames.
        _ = try host.reply(to: ["op": "open", "route": "counter", "argument": "3600000"])
        _ = try host.reply(to: ["op": "tap", "label": "Count"])
        let stepped = try host.reply(to: ["op": "press", "key": "+"])
        #expect(stepped["text"]?.contains("Count: [-] 1 [+]") == true, "\(stepped)")
        let tapped = try host.reply(to: ["op": "tap", "label": "Details"])
        #expect(tapped["text"]?.contains("[x] Details") == true, "\(tapped)")
        #expect(tapped["styles"]?.contains("--- styles") == false && tapped["styles"]?.contains("r") == true, "the focused toggle is reversed")

        let reported = try host.reply(to: ["op": "tap", "label": "report"])
        #expect(reported["error"] == nil, "\(reported)")
        let log = try String(contentsOfFile: host.logPath, encoding: .utf8)
        #expect(log.contains("count 0, ticks 0, total 0"), "a declared action is tapped by name; the plugin's log line goes to stderr:\n\(log)")

        let wrong = try host.reply(to: ["op": "tap", "label": "Nope"])
        #expect(wrong["error"]?.hasPrefix("no control labelled 'Nope' on the screen; its labels: 'Count', 'Add to total', 'Details'") == true, "\(wrong)")
        let badKey = try host.reply(to: ["op": "press", "key": "hyper"])
        #expect(badKey["error"] == "test-host: 'hyper' is not a key name (Docs/testing-plugins.md lists them)", "\(badKey)")
        #expect(badKey["text"] == reported["text"], "a failed request leaves the frame as it was")
    }
}

/// One `berth test-host` run, spoken to as the kit does: a JSON line each way.
private final class TestHostSession {
    private let process = Process()
    private let input = Pipe()
    private let output = Pipe()
    private var buffered = Data()
    /// Its stderr: the host's events and log lines, the plugin's included.
    let logPath: String

    init(package: String, library: String, isolation: String, log: String) throws {
        logPath = log
        _ = FileManager.default.createFile(atPath: log, contents: nil)
        process.executableURL = URL(fileURLWithPath: BuildProducts.berth)
        process.arguments = ["test-host", package, "--library", library, "--isolation", isolation]
        process.standardInput = input
        process.standardOutput = output
        process.standardError = FileHandle(forWritingAtPath: log)
        try process.run()
    }

    /// Sends `request` (nil: only reads, for the first frame) and reads the reply.
    func reply(to request: [String: String]?) throws -> [String: String] {
        if let request {
            try input.fileHandleForWriting.write(contentsOf: try JSONSerialization.data(withJSONObject: request) + Data("\n".utf8))
        }
        while !buffered.contains(UInt8(ascii: "\n")) {
            let chunk = output.fileHandleForReading.availableData
            try #require(!chunk.isEmpty, "berth test-host ended (status \(process.isRunning ? "running" : String(process.terminationStatus)))")
            buffered += chunk
        }
        let newline = buffered.firstIndex(of: UInt8(ascii: "\n"))!
        let line = buffered[..<newline]
        buffered = Data(buffered[(newline + 1)...])
        return try #require((try JSONSerialization.jsonObject(with: line)) as? [String: String], "\(String(decoding: line, as: UTF8.self))")
    }

    func end() {
        try? input.fileHandleForWriting.close()
        process.waitUntilExit()
    }
}
