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
            #expect(throws: ScreenError.self) { try host.sendBlocking(screen: opened.id, action: "remove", payload: []) }
        }
        await eventuallyAsync { host.events.contains { $0.kind == .crashed } }
        let crash = try #require(host.events.first { $0.kind == .crashed }, "\(host.events.suffix(10).map(\.description))")
        // The trap is in the standard library (Swift/Array.swift:1350); the report names the
        // plugin's line that called it, found in the debug build's line table:
        // "the worker of org.berth.stress crashed (SIGILL): TrapScreen.swift:39: Fatal error: Index out of range"
        #expect(crash.message == "the worker of org.berth.stress crashed (SIGILL): TrapScreen.swift:\(try Self.removeLine()): Fatal error: Index out of range")
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

    @Test("a standard-library trap is located at the first plugin frame with a line; the plugin's own fatal line is kept")
    func locatedInPlugin() {
        let trace = [
            "4    libswiftCore.so            0x00007f0adc0eefa2 <unavailable> + 3076002",
            "5    gen-1-libTasks.so          0x00007f0adb3cc100 TaskList.thunk + 12",
            "6    gen-1-libTasks.so          0x00007f0adb3cccae <unavailable> + 568494",
        ]
        let base: UInt64 = 0x00007f0adb3cccae - 568494
        var asked: [UInt64] = []
        let symbolizer: FatalErrorReport.Symbolizer = { image, offsets in
            #expect(image == "/run/berth/com.nu.tasks/gen-1-libTasks.so")
            asked = offsets
            return [nil, "/home/nu/Tasks/Sources/Tasks/TaskList.swift:100 (discriminator 2)"]
        }
        let images = ["/run/berth/com.nu.tasks/gen-1-libTasks.so"]
        let library = FatalErrorReport(line: "Swift/ContiguousArrayBuffer.swift:600: Fatal error: Index out of range", stackTrace: trace)
        #expect(library.located(in: images, symbolizer: symbolizer) == "TaskList.swift:100: Fatal error: Index out of range")
        // Return addresses, one byte back (into the call), relative to the image.
        #expect(asked == [0x00007f0adb3cc100 - base - 1, 568494 - 1])
        let own = FatalErrorReport(line: "Tasks/TaskList.swift:100: Fatal error: bad row", stackTrace: trace)
        #expect(own.located(in: images, symbolizer: symbolizer) == "Tasks/TaskList.swift:100: Fatal error: bad row")
        #expect(library.located(in: ["/elsewhere/libOther.so"], symbolizer: symbolizer) == library.line)
        #expect(library.located(in: images) { _, offsets in offsets.map { _ in "??:0" } } == library.line, "no line information")
    }

    /// The fixture's line that removes past the end (TrapScreen.swift's `items.remove(at:)`).
    private static func removeLine() throws -> Int {
        let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../Fixtures/BerthStress/TrapScreen.swift").standardized.path
        let lines = try String(contentsOfFile: fixture, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false)
        return try #require(lines.firstIndex { $0.contains("items.remove(at:") }) + 1
    }
}
