import Foundation
import Testing

/// `berth run --web` in the `berth` binary, which has no web server: it runs `berth-web`
/// with its own arguments, or says in one line how to build it.
@Suite("berth run --web runs berth-web", .serialized)
struct BerthCommandTests {
    @Test("berth run --web finds berth-web, runs it with the same arguments, and the page is served")
    func execsBerthWeb() throws {
        let workspace = try Workspace()
        try workspace.stageExamples()
        // No $BERTH_WEB: `berth` finds berth-web beside itself or in this checkout's WebUI/.build.
        _ = try Paths.berthWeb()
        let host = try WebHost(workspace: workspace, isolation: "process", executable: try Paths.rootProduct("berth"))
        defer { host.stop() }
        #expect(try RawHTTP.request(port: host.port, "GET /?token=\(host.token) HTTP/1.1\nHost: 127.0.0.1:\(host.port)\nConnection: close\n\n").hasPrefix("HTTP/1.1 200"))
        #expect(host.stop() == 0, "Ctrl-C ends it cleanly:\n\(host.printed)")
    }

    @Test("without berth-web, --web is one line saying how to build it")
    func missingBerthWeb() throws {
        let workspace = try Workspace()
        let berth = Process()
        berth.executableURL = URL(fileURLWithPath: try Paths.rootProduct("berth"))
        berth.arguments = ["run", "--web", "--plugins", workspace.plugins]
        var environment = ProcessInfo.processInfo.environment
        environment["BERTH_WEB"] = workspace.root + "/no-berth-web"
        berth.environment = environment
        let errors = Pipe()
        berth.standardError = errors
        berth.standardOutput = FileHandle.nullDevice
        try berth.run()
        let text = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        berth.waitUntilExit()
        #expect(berth.terminationStatus == 1)
        #expect(text.contains("--web needs berth-web, which is not built: run scripts/build-web"), "\(text)")
        #expect(text.split(separator: "\n").count == 1, "\(text)")
    }
}
