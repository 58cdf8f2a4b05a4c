@_spi(Engine) import BerthRuntime
import BerthTerminalUI
import BerthTestSupport
import Foundation
import Testing

/// The five example plugins staged into one host (each loaded when first opened) (in the isolation mode the test
/// matrix says), with a headless front end over it.
@MainActor
final class FrontEndHost {
    let workspace = PluginWorkspace()
    let host: BerthHost
    let terminal: HeadlessTerminal

    init(width: Int = 80, height: Int = 24, adding extra: (PluginWorkspace) -> Void = { _ in }) throws {
        for manifest in ["counter.json", "greeter.json", "inbox.json", "userpicker.json", "profile.json"] {
            workspace.stage(manifest)
        }
        extra(workspace)
        host = try workspace.makeHost()
        // Each plugin loads on first use: a test starts only the workers it needs.
        let errors = host.activateDiscovered(lazy: true)
        guard errors.isEmpty else { throw errors[0] }
        terminal = HeadlessTerminal(host: host, width: width, height: height)
    }

    /// The same, with `route` opened (as most tests start).
    convenience init(opening route: Route, argument: String = "", width: Int = 80, height: Int = 24,
                     adding extra: (PluginWorkspace) -> Void = { _ in }) throws {
        try self.init(width: width, height: height, adding: extra)
        try open(route, argument: argument)
    }

    isolated deinit {
        terminal.app.detach()
        host.shutdown()
    }

    /// Opens `route` as a person would from the start screen's list or `:open`.
    func open(_ route: Route, argument: String = "") throws {
        try host.push(route, argument: Array(argument.utf8))
        terminal.settle()
    }
}

/// Golden frames live in Tests/BerthTerminalUITests/Frames/NAME.txt: the frame's text, then
/// its style mask. BERTH_UPDATE_FRAMES=1 writes them anew (then review the diff).
enum GoldenFrame {
    static let folder = (#filePath as NSString).deletingLastPathComponent + "/Frames"

    @MainActor
    static func check(_ terminal: HeadlessTerminal, _ name: String, sourceLocation: SourceLocation = #_sourceLocation) {
        let path = folder + "/\(name).txt"
        let actual = terminal.golden
        if ProcessInfo.processInfo.environment["BERTH_UPDATE_FRAMES"] == "1" {
            _ = FileManager.default.createFile(atPath: path, contents: Data(actual.utf8))
            return
        }
        guard let expected = FileManager.default.contents(atPath: path).map({ String(decoding: $0, as: UTF8.self) }) else {
            Issue.record("no golden frame \(path); run with BERTH_UPDATE_FRAMES=1 to write it:\n\(actual)", sourceLocation: sourceLocation)
            return
        }
        #expect(actual == expected, "frame \(name) differs from \(path)", sourceLocation: sourceLocation)
    }
}
