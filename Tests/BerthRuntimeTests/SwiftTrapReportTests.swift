import Foundation
import Testing
@_spi(Engine) @testable import BerthRuntime
import BerthTestSupport

/// A Swift plugin that traps, in each place its code runs: the crash report names the
/// plugin's own line (never the standard library's or the SDK's) and its own frames, with
/// the SDK's and the runtime's folded. In a worker the host's event says it; in process the
/// trap ends the host, and the Swift runtime's report on its stderr says it.
@Suite("Swift trap reports", .blocking) @MainActor
struct SwiftTrapReportTests {
    /// Each place a Swift plugin's code runs, and the function the report names there.
    nonisolated static let places: [(place: String, function: String)] = [
        ("create", "TrapScreen.init(context:)"),
        ("activate", "TrapScreen.activate()"),
        ("render", "TrapScreen.body.getter"),
        ("button", "closure #1 in closure #1 in TrapScreen.body.getter"),
        ("action", "TrapScreen.handle(action:payload:)"),
        ("task", "closure #1 in TrapScreen.onEvent(_:)"),
        ("service", "static TrapService.make()"),
    ]

    @Test("in a worker, a trap in each place is reported at the plugin's line, with its own frames and the SDK's folded",
          arguments: Self.places.map(\.place))
    func workerReport(place: String) async throws {
        let workspace = PluginWorkspace()
        workspace.stage("stress.json") { $0["isolation"] = "process" }
        let host = try workspace.makeHost(isolation: TestIsolation.settings(.manifest(default: .inProcess)))
        try host.load("org.berth.stress")
        let opened = try? host.push("trap", argument: Array(place.utf8))
        if let opened, place == "action" {
            #expect(throws: ScreenError.self) { try host.sendBlocking(screen: opened.id, action: "remove", payload: []) }
        }
        if opened != nil, place == "button" {
            let button = try #require(try host.render()?.allNodes.first { $0.type == "Button" })
            let failure = try #require(throws: ScreenError.self) { try host.inputBlocking(.tap, view: button.id) }
            // Named as the person's tap, not as berth.h's action (`berth.tap`).
            #expect(failure.message.hasPrefix("org.berth.stress/trap tap on the Button 'Trap' failed: "), "\(failure.message)")
        }
        await eventuallyAsync { host.events.contains { $0.kind == .crashed } }
        let crash = try #require(host.events.first { $0.kind == .crashed }, "\(host.events.suffix(10).map(\.description))")
        let line = try Self.line(of: place)
        let function = try #require(Self.places.first { $0.place == place }?.function)
        // "the worker of org.berth.stress crashed (SIGILL): TrapScreen.swift:40: Fatal error: Index out of range;
        //  stack: TrapScreen.handle(action:payload:) at TrapScreen.swift:40 ← …"
        let expected = "the worker of org.berth.stress crashed (SIGILL): TrapScreen.swift:\(line): Fatal error: Index out of range;"
            + " stack: \(function) at TrapScreen.swift:\(line)"
        #expect(crash.message.hasPrefix(expected), "\(crash.message)")
        #expect(!crash.message.contains("PluginRuntime.swift") && !crash.message.contains("reportFatalError"), "\(crash.message)")
    }

    @Test("in process, a trap in each place ends the host, and its stderr names the plugin's line and function",
          arguments: Self.places.map(\.place))
    nonisolated func inProcessReport(place: String) throws {
        let workspace = PluginWorkspace()
        workspace.stage("stress.json")
        let next = place == "action" ? "send remove" : place == "button" ? "tap 1" : "screen"
        let output = try BerthProcess.run(["run", "--plugins", "plugins", "--isolation", "in-process", "--no-socket", "--script", "-"],
                                          in: workspace.root, input: "open trap \(place)\n\(next)\n",
                                          extraEnvironment: ["SWIFT_BACKTRACE": "enable=yes,interactive=no,color=no"])
        #expect(output.status != 0, "the trap ends the host: \(output.standardOutput)")
        let line = try Self.line(of: place)
        #expect(output.standardError.contains("Fatal error: Index out of range"), "\(output.standardError)")
        // The Swift runtime's backtracer prints each frame's function and source line.
        let frame = output.standardError.split(separator: "\n").first { $0.contains("TrapScreen.swift:\(line)") }
        #expect(frame != nil, "\(output.standardError)")
    }

    @Test("a stack frame that mentions fatal is not the fatal line; a located Swift fatal error is")
    func lineKinds() {
        #expect(StandardErrorTail.isSwiftFatalError("Tasks/Tasks.swift:100: Fatal error: boom"))
        #expect(StandardErrorTail.isSwiftFatalError("Fatal error: Index out of range"))
        #expect(!StandardErrorTail.isSwiftFatalError("note: Fatal error: is only a word here"))
        #expect(StandardErrorTail.isStackFrame("1    libswiftCore.so    0x00007fa90c912b60 _swift_stdlib_reportFatalErrorInFile + 109"))
        #expect(!StandardErrorTail.isStackFrame("fatal: no such object"))
    }

    @Test("a standard-library trap is located at the first plugin frame outside the SDK; the plugin's own fatal line is kept; SDK frames fold")
    func locatedInPlugin() {
        let trace = [
            "4    libswiftCore.so            0x00007f0adc0eefa2 <unavailable> + 3076002",
            "5    gen-1-libTasks.so          0x00007f0adb3cc100 TaskList.thunk + 12",
            "6    gen-1-libTasks.so          0x00007f0adb3cccae <unavailable> + 568494",
            "7    gen-1-libTasks.so          0x00007f0adb3cccee <unavailable> + 568558",
            "8    gen-1-libTasks.so          0x00007f0adb3ccd0e <unavailable> + 568590",
        ]
        let base: UInt64 = 0x00007f0adb3cccae - 568494
        var asked: [UInt64] = []
        let sdk = FatalErrorReport.SourceFrame(function: "closure #1 in PluginRuntime.install()",
                                               file: "/home/nu/berth/BerthSDK/Sources/BerthSDK/PluginRuntime.swift", line: 173)
        let own = FatalErrorReport.SourceFrame(function: "TaskList.remove(at:)", file: "/home/nu/Tasks/Sources/Tasks/TaskList.swift", line: 100)
        let caller = FatalErrorReport.SourceFrame(function: "TaskList.handle(action:payload:)", file: "/home/nu/Tasks/Sources/Tasks/TaskList.swift", line: 40)
        let symbolizer: FatalErrorReport.Symbolizer = { image, offsets in
            #expect(image == "/run/berth/com.nu.tasks/gen-1-libTasks.so")
            asked = offsets
            return [nil, own, sdk, caller]
        }
        let images = ["/run/berth/com.nu.tasks/gen-1-libTasks.so"]
        let library = FatalErrorReport(line: "Swift/ContiguousArrayBuffer.swift:600: Fatal error: Index out of range", stackTrace: trace)
        let located = library.located(in: images, symbolizer: symbolizer)
        #expect(located.line == "TaskList.swift:100: Fatal error: Index out of range")
        #expect(located.frames == [own, caller])
        #expect(located.folded == [2, 1])
        #expect(located.text == "TaskList.swift:100: Fatal error: Index out of range; stack: TaskList.remove(at:) at TaskList.swift:100"
            + " ← 1 SDK/runtime frame ← TaskList.handle(action:payload:) at TaskList.swift:40")
        // Return addresses, one byte back (into the call), relative to the image; a frame
        // with a symbol is printed as the symbol's address and the offset into it.
        let expectedOffsets: [UInt64] = [0x00007f0adb3cc100 + 12 - base - 1, 568494 - 1, 568558 - 1, 568590 - 1]
        #expect(asked == expectedOffsets)
        let ownLine = FatalErrorReport(line: "Tasks/TaskList.swift:100: Fatal error: bad row", stackTrace: trace)
        #expect(ownLine.located(in: images, symbolizer: symbolizer).line == "Tasks/TaskList.swift:100: Fatal error: bad row")
        #expect(library.located(in: ["/elsewhere/libOther.so"], symbolizer: symbolizer).text == library.line)
        #expect(library.located(in: images) { _, offsets in offsets.map { _ in nil } }.text == library.line, "no line information")
        // Only the SDK's frames have lines: nothing of the author's to name, so the line stays.
        #expect(library.located(in: images) { _, offsets in offsets.map { _ in sdk } }.text == library.line)
    }

    @Test("Swift function names read as the author wrote them")
    func readableNames() {
        #expect(SwiftSymbolName.shortened("BerthStress.TrapScreen.handle(action: Swift.String, payload: [Swift.UInt8]) throws -> ()")
            == "TrapScreen.handle(action:payload:)")
        #expect(SwiftSymbolName.shortened("closure #1 @Sendable (BerthSDK.TaskContext) async throws -> () in BerthStress.TrapScreen.onEvent(BerthSDK.ScreenEvent) -> ()")
            == "closure #1 in TrapScreen.onEvent(_:)")
        #expect(SwiftSymbolName.shortened("BerthStress.TrapScreen.body.getter : some") == "TrapScreen.body.getter")
        #expect(SwiftSymbolName.shortened("static BerthStress.TrapService.make() -> BerthStress.TrapService") == "static TrapService.make()")
        #expect(SwiftSymbolName.readable("main") == "main")
        // An async function's frames (a contract's serve runs async) are named as the function.
        #expect(SwiftSymbolName.shortened("(1) await resume partial function for Clock.SystemClock.next(after: Foundation.Date) async throws -> Foundation.Date")
                == "SystemClock.next(after:)")
        #expect(SwiftSymbolName.shortened("(2) suspend resume partial function for closure #1 () async -> () in Clock.SystemClock.next(after: Foundation.Date) async throws -> Foundation.Date")
                == "closure #1 in SystemClock.next(after:)")
    }

    /// The fixture's line that traps in `place` (TrapScreen.swift's `// trap: PLACE`).
    private nonisolated static func line(of place: String) throws -> Int {
        let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .appendingPathComponent("../Fixtures/BerthStress/TrapScreen.swift").standardized.path
        let lines = try String(contentsOfFile: fixture, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false)
        return try #require(lines.firstIndex { $0.hasSuffix("// trap: \(place)") }) + 1
    }
}
