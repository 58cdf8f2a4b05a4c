import BerthRuntime
import Foundation

/// The files of a new plugin package (`berth new`). The Swift template is one screen with
/// a `@State` and a button, and no manifest (`berth pack` generates it from the code); the
/// C template is one screen with state, an action and a lifecycle hook, and a hand-written
/// manifest whose entry symbol matches the code.
struct PluginTemplate {
    let name: String
    let id: String
    let language: Berth.New.Language
    let berthRoot: String
    let berthBinary: String
    /// The screen's route (`Berth.New` picks one no plugin beside it uses).
    let route: String
    /// The package's own folder, absolute: the README names the checkout and the `berth`
    /// executable relative to it, so it holds no path of the machine that made it.
    let packageFolder: String

    /// The Berth checkout this binary was built from (its sources are next to it).
    static var berthSourceRoot: String {
        var folder = ParentPath.of(#filePath) // Sources/BerthCLI
        folder = ParentPath.of(folder)         // Sources
        return ParentPath.of(folder)
    }

    /// This `berth` executable, for the README's commands.
    static var berthBinary: String {
        (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? "berth"
    }

    /// `base`, or `base-2`, `base-3` … when a plugin in the folder beside already has it (a
    /// route or an id).
    static func unused(_ base: String, avoiding taken: Set<String>) -> String {
        guard taken.contains(base) else { return base }
        return (2...).lazy.map { "\(base)-\($0)" }.first { !taken.contains($0) }!
    }

    /// `path` as seen from the package's folder ("../berth/Docs"), both absolute.
    static func relative(_ path: String, from folder: String) -> String {
        let target = URL(fileURLWithPath: path).standardizedFileURL.pathComponents
        let base = URL(fileURLWithPath: folder).standardizedFileURL.pathComponents
        let common = zip(target, base).prefix { $0 == $1 }.count
        let parts = Array(repeating: "..", count: base.count - common) + target[common...]
        return parts.isEmpty ? "." : parts.joined(separator: "/")
    }

    /// How the README runs `berth`: its name when that is the one on $PATH, else its path
    /// from the package's folder.
    private var berthCommand: String {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
        let onPath = path.split(separator: ":").contains { folder in
            URL(fileURLWithPath: String(folder)).appendingPathComponent("berth").resolvingSymlinksInPath().path == berthBinary
        }
        if onPath { return "berth" }
        let relative = Self.relative(berthBinary, from: packageFolder)
        return relative.hasPrefix("../") ? relative : "./" + relative
    }

    var entry: String { "berth_\(name.lowercased())_entry_v1" }
    var library: String { language == .swift ? "lib\(name).so" : "lib\(name.lowercased()).so" }

    var files: [(path: String, contents: String)] {
        switch language {
        case .swift:
            // No manifest: `berth pack` writes it from what the code states.
            [("Package.swift", swiftPackage), ("Sources/\(name)/\(name).swift", swiftSource),
             ("Tests/\(name)Tests/\(name)Tests.swift", swiftTest), ("Tests/\(name)Tests/Frames/README.md", framesReadme),
             ("README.md", readme)]
        case .c:
            [("Makefile", makefile), ("\(name.lowercased()).c", cSource), ("plugin.json", manifest), ("README.md", readme)]
        }
    }

    private var manifest: String {
        """
        {
          "id": "\(id)",
          "name": "\(name)",
          "version": "0.1.0",
          "abi": "1.0",
          "library": "\(library)",
          "entry": "\(entry)",
          "runtime": "\(language.rawValue)",
          "routes": ["\(route)"],
          "capabilities": []
        }

        """
    }

    /// Where, in a Berth checkout, the package a plugin depends on lives (the SDK and the
    /// C header); SwiftPM names it `berthsdk` after that folder, wherever the checkout is.
    static let sdkFolder = "BerthSDK"
    static let sdkIdentity = "berthsdk"
    /// The folder of berth.h, relative to a checkout.
    static let headerFolder = "\(sdkFolder)/Sources/CBerth/include"

    /// Why `root` cannot be the checkout a new package builds against, or nil when it can.
    static func problem(withCheckout root: String, for language: Berth.New.Language) -> String? {
        let needed = language == .swift ? "\(sdkFolder)/Package.swift" : "\(headerFolder)/berth.h"
        let path = (root as NSString).appendingPathComponent(needed)
        return FileManager.default.fileExists(atPath: path) ? nil : "\(root) is not a Berth checkout: \(path) does not exist"
    }

    /// The SDK package by its path from the package's folder: the package holds no path of
    /// the machine that made it, and moves with its checkout.
    private var swiftPackage: String {
        let sdk = Self.relative((berthRoot as NSString).appendingPathComponent(Self.sdkFolder), from: packageFolder)
        return """
        // swift-tools-version: 6.0
        import PackageDescription

        let package = Package(
            name: "\(name)",
            products: [.library(name: "\(name)", type: .dynamic, targets: ["\(name)"])],
            dependencies: [.package(path: "\(sdk)")],
            targets: [
                .target(name: "\(name)", dependencies: [.product(name: "BerthSDK", package: "\(Self.sdkIdentity)")]),
                // The test kit drives the plugin through `berth`: the test compiles no runtime.
                // Frames/ holds its golden frames, which are not sources.
                .testTarget(name: "\(name)Tests", dependencies: [.product(name: "BerthTesting", package: "\(Self.sdkIdentity)")],
                            exclude: ["Frames"]),
            ]
        )

        """
    }

    /// A test with the kit (Docs/testing-plugins.md): the screen driven by its button's label
    /// and by a key, in both places a host runs plugins.
    private var swiftTest: String {
        """
        import BerthTesting
        import Testing

        @Suite("\(name): the \(route) screen")
        struct \(name)Tests {
            @Test("Wave counts the waves, by its label and by Enter", arguments: PluginIsolation.allCases)
            func waveCounts(_ isolation: PluginIsolation) async throws {
                let plugin = try await PluginUnderTest(isolation: isolation)
                try await plugin.open("\(route)")
                #expect(plugin.text.contains("Waved 0 time(s)"))
                try await plugin.tap("Wave")      // a click: presses the button, and focuses it
                try await plugin.press(.enter)    // presses the focused button again
                #expect(plugin.text.contains("Waved 2 time(s)"))
            }
        }

        """
    }

    /// The golden frames' folder exists from the start: SwiftPM warns about an excluded
    /// folder that is missing as it warns about files in a target it was not told of.
    private var framesReadme: String {
        """
        # Golden frames

        `try plugin.expectFrame("NAME")` in a test beside this folder compares the terminal's
        frame with `NAME.txt` here, and writes the file when it is missing (the check then fails
        once: look at it, then run again). `BERTH_UPDATE_FRAMES=1 swift test` rewrites them.
        Package.swift excludes this folder from the test target. The format: testing-plugins.md
        in the Berth checkout's Docs/.

        """
    }

    private var swiftSource: String {
        """
        import BerthSDK

        final class \(name)Screen: Screen {
            static let route = "\(route)"
            init(context: ScreenContext) {}
            var body: some View { WaveView() }
        }

        struct WaveView: View {
            @State var waves = 0
            var body: some View { VStack { Text("Waved \\(waves) time(s)"); Button("Wave") { waves += 1 } } }
        }

        @_cdecl("\(entry)")
        public func entry(_ host: UnsafeRawPointer?, _ plugin: UnsafeRawPointer?) -> UnsafeRawPointer? {
            Plugin(id: "\(id)", screens: [\(name)Screen.self], capabilities: []).export(host, plugin)
        }

        """
    }

    private var makefile: String {
        """
        # Builds \(library) against berth.h. `make BERTH=/path/to/berth` to use another checkout.
        BERTH ?= \(berthRoot)
        CFLAGS ?= -std=c11 -Wall -Wextra -O2

        \(library): \(name.lowercased()).c
        \tcc $(CFLAGS) -fPIC -shared -I$(BERTH)/\(Self.headerFolder) -o $@ $<

        clean:
        \trm -f \(library)

        """
    }

    private var cSource: String {
        """
        /* The \(route) screen in C: state in the instance, an action, a lifecycle hook. */
        #include <stdio.h>
        #include <stdlib.h>
        #include <string.h>

        #include "berth.h"

        static const berth_host_v1 *host;
        static berth_plugin_handle *self_handle;

        typedef struct screen { berth_screen_handle *handle; int waves; } screen;

        static void say(const char *line) {
            if (BERTH_HAS_FIELD(berth_host_v1, host, log) && host->log != NULL) host->log(self_handle, BERTH_LOG_INFO, line);
        }

        static berth_status create(berth_screen_handle *handle, const char *route, berth_bytes argument,
                                   berth_instance **out, berth_error *error) {
            (void)route;
            (void)argument;
            screen *instance = calloc(1, sizeof *instance);
            if (instance == NULL) return berth_error_set(error, BERTH_ERR_FAILED, "out of memory");
            instance->handle = handle;
            *out = instance;
            return BERTH_OK;
        }

        static void destroy(berth_instance *instance) { free(instance); }

        static berth_status activate(berth_instance *instance, berth_error *error) {
            (void)instance;
            (void)error;
            say("\(route) is active");
            return BERTH_OK;
        }

        static berth_status action(berth_instance *opaque, const char *name, berth_bytes payload, berth_error *error) {
            screen *instance = opaque;
            if (strcmp(name, "wave") != 0) return berth_error_set(error, BERTH_ERR_NOT_FOUND, "\(route) has only the action 'wave'");
            char line[160];
            snprintf(line, sizeof line, "Hello, %.*s! (wave %d)", (int)payload.length, (const char *)payload.data, ++instance->waves);
            say(line);
            return BERTH_OK;
        }

        static const berth_plugin_v1 table = {
            .struct_size = sizeof(berth_plugin_v1), .abi_version = BERTH_ABI_VERSION, .plugin_id = "\(id)",
            .create = create, .destroy = destroy, .activate = activate, .action = action,
        };

        const berth_plugin_v1 *\(entry)(const berth_host_v1 *host_table, berth_plugin_handle *plugin) {
            host = host_table;
            self_handle = plugin;
            return &table;
        }

        """
    }

    private var readme: String {
        let build = language == .swift ? "swift build" : "make"
        let berthBinary = berthCommand
        let berthRoot = Self.relative(berthRoot, from: packageFolder)
        return """
        # \(name)

        A Berth plugin (\(language == .swift ? "Swift" : "C")), id `\(id)`, with one route: `\(route)`.

        ```sh
        \(berthBinary) dev . --plugins ../plugins     # build, pack, show; again on every save

        \(build)                                      # or step by step: 1. build the library
        \(berthBinary) pack . --out ../plugins        # 2. check it as the host would, pin its sha256, make a drop-in folder
        \(berthBinary) run --plugins ../plugins       # 3. run a host (it loads the plugin), then type: open \(route)
        ```

        \(language == .swift ? "The code states `capabilities: []` (`pack` writes them into the manifest)" : "`plugin.json` declares no capabilities"),
        because this code asks the host only to \(language == .swift ? "log and keep view state" : "log"). When it starts to navigate, persist values or
        run tasks, add \(language == .swift ? "`.navigate`, `.statePersist` or `.tasks` to `capabilities:`" : "`navigate`, `state.persist` or `tasks` to `\"capabilities\"`")
        (the host refuses the call otherwise): \(berthRoot)/Docs/security.md.

        \(language == .swift ? testNote(berthRoot: berthRoot) : "")The tutorial is in the Berth checkout: \(berthRoot)/Docs/\(language == .swift ? "first-plugin.md" : "c-plugins.md").

        """
    }

    /// The README's paragraph on the generated test (Swift packages only).
    private func testNote(berthRoot: String) -> String {
        """
        `swift test` runs Tests/\(name)Tests: the screen driven by its button's label and by a key,
        with the plugin in the host's process and in a worker, on the library that run builds
        (\(berthRoot)/Docs/testing-plugins.md).


        """
    }
}
