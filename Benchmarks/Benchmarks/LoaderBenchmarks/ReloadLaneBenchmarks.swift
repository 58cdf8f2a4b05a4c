import Benchmark
@_spi(Engine) import BerthRuntime
import BerthTerminalUI
import Foundation

// Reloads off the main actor (issue 39). R3 is a key press on screen B (Counter, in process)
// until its frame is written, while plugin A (the crasher fixture, in process, its library
// padded to 10 MB) reloads one reload after another, against the same key press with A idle.
// A's validation and its shadow copy (the library read and hashed) run on a thread of their
// own; the main actor swaps the generations.

extension ExamplePlugin {
    /// The crasher fixture (a C plugin); its route "ok" never fails.
    static let crasher = cFixture(id: "org.berth.crasher", name: "Crasher", library: "libBerthCrasher.so",
                                  entry: "berth_crasher_entry_v1", routes: ["ok"])
}

/// Counter over the crasher's screen, both in process: the visible screen is Counter (B);
/// the crasher's under it is A.
@MainActor
final class ReloadLaneFixture: KeyPressFixture {
    static let librarySize = 10 << 20
    let fixture: ScreenFixture
    let app: TerminalApp
    private var keepReloading: Task<Void, Never>?
    private(set) var reloads = 0

    init() throws {
        let staged = try StagedPlugins([.crasher, .counter])
        // Padding after the ELF file's end: the dynamic linker maps only what the headers name,
        // while validation and the shadow copy read and hash every byte.
        let library = try FileHandle(forWritingTo: URL(fileURLWithPath: staged.library(of: .crasher)))
        let end = try library.seekToEnd()
        try library.write(contentsOf: Data(count: Self.librarySize - Int(end)))
        try library.close()
        fixture = try ScreenFixture(staged: staged, [.crasher, .counter], isolation: .inProcess)
        _ = try fixture.host.push("org.berth.crasher/ok")
        _ = try fixture.host.push("com.example.counter/counter")
        app = TerminalApp(host: fixture.host, screen: CountingScreen(width: 80, height: 24))
        app.draw()
    }

    /// Keeps A reloading, each reload started as soon as the last was committed.
    func keepPluginAReloading() {
        let host = fixture.host
        keepReloading = Task { @MainActor [weak self] in
            while !Task.isCancelled {
                do { try await host.reloadOffMain("org.berth.crasher") } catch { fatalError("A's reload failed: \(error)") }
                self?.reloads += 1
            }
        }
    }

    /// Waits until A has reloaded once (so the measured key presses overlap reloads).
    func waitUntilPluginAIsBusy() async {
        while reloads == 0 { try? await Task.sleep(for: .milliseconds(1)) }
    }

    func tearDown() async {
        keepReloading?.cancel()
        await keepReloading?.value
        app.detach()
        fixture.tearDown()
    }
}

func registerReloadLaneBenchmarks() {
    registerKeyPressBenchmarks(busy: "key press on screen B while plugin A reloads a 10 MB library (lanes)",
                               idle: "the same key press with plugin A idle (10 MB library)") { reloading in
        let lanes = try ReloadLaneFixture()
        if reloading { lanes.keepPluginAReloading() }
        return lanes
    }
}
