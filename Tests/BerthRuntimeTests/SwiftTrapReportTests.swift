import Foundation
import Testing
@testable import BerthRuntime
import BerthTestSupport

/// A Swift plugin that traps in its worker: the crash event names the Swift runtime's
/// fatal-error line, never a frame of the stack trace the runtime prints after it.
@Suite("Swift trap reports (isolated plugins)") @MainActor
struct SwiftTrapReportTests {
    @Test("a Swift trap at each moment is reported by its fatal-error line with file and line",
          arguments: ["create", "activate", "render", "action", "task"])
    func fatalLine(moment: String) async throws {
        let workspace = PluginWorkspace()
        workspace.stage("stress.json") { $0["isolation"] = "process" }
        let host = try workspace.makeHost(isolation: TestIsolation.settings(.manifest(default: .inProcess)))
        try host.load("org.berth.stress")
        let opened = try? host.push("trap", argument: Array(moment.utf8))
        if moment == "action", let opened {
            #expect(throws: ScreenError.self) { try host.send(screen: opened.id, action: "remove", payload: []) }
        }
        await eventuallyAsync { host.events.contains { $0.kind == .crashed } }
        let crash = try #require(host.events.first { $0.kind == .crashed }, "\(host.events.suffix(10).map(\.description))")
        // "the worker of org.berth.stress crashed (SIGILL): Swift/Array.swift:1350: Fatal error: Index out of range"
        #expect(crash.message.hasPrefix("the worker of org.berth.stress crashed (SIGILL): "), "\(crash.message)")
        #expect(crash.message.hasSuffix(".swift:\(Self.lineNumber(in: crash.message)): Fatal error: Index out of range"), "\(crash.message)")
        #expect(!crash.message.contains("reportFatalError"), "\(crash.message)")
    }

    @Test("a stack frame that mentions fatal is not the fatal line; a located Swift fatal error is")
    func lineKinds() {
        #expect(StandardErrorTail.isSwiftFatalError("Tasks/Tasks.swift:100: Fatal error: boom"))
        #expect(StandardErrorTail.isSwiftFatalError("Fatal error: Index out of range"))
        #expect(!StandardErrorTail.isSwiftFatalError("note: Fatal error: is only a word here"))
        #expect(StandardErrorTail.isStackFrame("1    libswiftCore.so    0x00007fa90c912b60 _swift_stdlib_reportFatalErrorInFile + 109"))
        #expect(!StandardErrorTail.isStackFrame("fatal: no such object"))
    }

    /// The digits between the last ".swift:" and ": Fatal error" ("" when there are none).
    private static func lineNumber(in message: String) -> String {
        guard let end = message.range(of: ": Fatal error"),
              let start = message[..<end.lowerBound].range(of: ".swift:", options: .backwards) else { return "" }
        let digits = message[start.upperBound..<end.lowerBound]
        return digits.allSatisfy(\.isNumber) && !digits.isEmpty ? String(digits) : "no line"
    }
}
