import Foundation
import Testing
import BerthTestSupport

/// A C plugin compiled here with `cc` against berth.h, misbehaving in one chosen way.
private func compileBrokenPlugin(_ workspace: PluginWorkspace, folder: String, body: String, manifest edit: (inout [String: Any]) -> Void = { _ in }) throws -> String {
    let path = workspace.plugins + "/" + folder
    try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    let source = """
        #include <stdint.h>
        #include <stdlib.h>
        #include <string.h>
        #include "berth.h"
        static berth_status ok_create(berth_screen_handle *s, const char *r, berth_bytes a, berth_instance **out, berth_error *e) {
            (void)s; (void)r; (void)a; (void)e; *out = malloc(16); return BERTH_OK;
        }
        static void ok_destroy(berth_instance *i) { free(i); }
        \(body)
        """
    try source.write(toFile: path + "/broken.c", atomically: true, encoding: .utf8)
    let compiler = Process()
    compiler.executableURL = URL(fileURLWithPath: "/usr/bin/cc")
    compiler.arguments = ["-std=c11", "-fPIC", "-shared", "-I", BuildProducts.packageRoot + "/BerthSDK/Sources/CBerth/include", "-o", path + "/libbroken.so", path + "/broken.c"]
    try compiler.run()
    compiler.waitUntilExit()
    guard compiler.terminationStatus == 0 else { throw RunningHostError("cc failed for \(folder)") }
    var manifest: [String: Any] = [
        "id": "org.berth.broken", "name": "Broken", "version": "1.0.0", "abi": "1.0", "library": "libbroken.so",
        "entry": "broken_entry_v1", "runtime": "c", "routes": ["main"],
    ]
    edit(&manifest)
    workspace.write(manifest: manifest, in: path)
    return path
}

/// A well-behaved table for the fixtures to break one piece of.
private let table = """
    static berth_plugin_v1 table = {sizeof(berth_plugin_v1), BERTH_ABI_VERSION, "org.berth.broken", ok_create, ok_destroy};
    """

@Suite("berth validate: conformance checks", .serialized, .blocking)
struct ConformanceTests {
    private func validate(_ folder: String, in workspace: PluginWorkspace, isolation: String = "manifest") throws -> (status: Int32, checks: [String: String], text: String) {
        let output = try BerthProcess.run(["validate", "--json", "--isolation", isolation, folder], in: workspace.root)
        let reports = try #require(try JSONSerialization.jsonObject(with: Data(output.standardOutput.utf8)) as? [[String: Any]])
        let checks = (reports.first?["checks"] as? [[String: Any]] ?? []).reduce(into: [String: String]()) { result, check in
            result[check["check"] as! String] = "\(check["status"]!): \(check["message"] ?? "")"
        }
        return (output.status, checks, output.standardOutput)
    }

    @Test("every example plugin passes (save-restore is skipped where a plugin keeps no instance state)")
    func examplesPass() throws {
        let workspace = PluginWorkspace()
        for manifest in ["counter.json", "greeter.json", "inbox.json", "userpicker.json", "profile.json"] { workspace.stage(manifest) }
        for folder in try FileManager.default.contentsOfDirectory(atPath: workspace.plugins) {
            // Where each manifest asks: Counter, Inbox and UserPicker in workers of their own.
            let (status, checks, text) = try validate("plugins/" + folder, in: workspace)
            #expect(status == 0, "\(folder): \(text)")
            #expect(checks.count == 10)
            #expect(checks.values.allSatisfy { $0.hasPrefix("pass") || $0.hasPrefix("skip: the plugin does not implement save_state") }, "\(folder): \(checks)")
        }
    }

    struct Broken: Sendable, CustomTestStringConvertible {
        let check: String
        let body: String
        let message: String
        /// What the check says when the plugin runs in a worker, where that differs.
        var isolatedMessage: String?
        var testDescription: String { check }

        /// A worker per generation has fresh globals whatever the plugin does: the check
        /// passes there.
        func passes(in isolation: String) -> Bool { check == "fresh-globals" && isolation == "process" }
    }

    static let broken: [Broken] = [
        Broken(check: "library-loads", body: """
            extern void berth_nowhere(void);
            \(table)
            const berth_plugin_v1 *broken_entry_v1(const berth_host_v1 *h, berth_plugin_handle *p) { (void)h; (void)p; berth_nowhere(); return &table; }
            """, message: "undefined symbol: berth_nowhere"),
        Broken(check: "abi-handshake", body: """
            static berth_plugin_v1 table = {sizeof(berth_plugin_v1), BERTH_MAKE_ABI_VERSION(2, 0), "org.berth.broken", ok_create, ok_destroy};
            const berth_plugin_v1 *broken_entry_v1(const berth_host_v1 *h, berth_plugin_handle *p) { (void)h; (void)p; return &table; }
            """, message: "plugin ABI 2.0 is too new"),
        Broken(check: "create-destroy-twice", body: """
            static berth_status leaky_create(berth_screen_handle *s, const char *r, berth_bytes a, berth_instance **out, berth_error *e) {
                (void)s; (void)r; (void)a; (void)e; *out = malloc(64 * 1024); memset(*out, 1, 64 * 1024); return BERTH_OK;
            }
            static void leaky_destroy(berth_instance *i) { (void)i; }
            static berth_plugin_v1 table = {sizeof(berth_plugin_v1), BERTH_ABI_VERSION, "org.berth.broken", leaky_create, leaky_destroy};
            const berth_plugin_v1 *broken_entry_v1(const berth_host_v1 *h, berth_plugin_handle *p) { (void)h; (void)p; return &table; }
            """, message: "destroy leaks"),
        Broken(check: "activate-deactivate-idempotent", body: """
            static int activations;
            static berth_status once(berth_instance *i, berth_error *e) { (void)i; return ++activations > 1 ? berth_error_set(e, BERTH_ERR_STATE, "activates only once") : BERTH_OK; }
            static berth_plugin_v1 table = {sizeof(berth_plugin_v1), BERTH_ABI_VERSION, "org.berth.broken", ok_create, ok_destroy, once};
            const berth_plugin_v1 *broken_entry_v1(const berth_host_v1 *h, berth_plugin_handle *p) { (void)h; (void)p; return &table; }
            """, message: "activates only once"),
        Broken(check: "routes-open-close", body: """
            /* The second route can be created, but never opens: its activation fails. */
            typedef struct { char route[16]; } item;
            static berth_status named_create(berth_screen_handle *s, const char *r, berth_bytes a, berth_instance **out, berth_error *e) {
                (void)s; (void)a; (void)e; item *i = calloc(1, sizeof *i); strncpy(i->route, r, 15); *out = i; return BERTH_OK;
            }
            static berth_status picky(berth_instance *i, berth_error *e) {
                return strcmp(((item *)i)->route, "second") == 0 ? berth_error_set(e, BERTH_ERR_FAILED, "this route never opens") : BERTH_OK;
            }
            static berth_plugin_v1 table = {sizeof(berth_plugin_v1), BERTH_ABI_VERSION, "org.berth.broken", named_create, ok_destroy, picky};
            const berth_plugin_v1 *broken_entry_v1(const berth_host_v1 *h, berth_plugin_handle *p) { (void)h; (void)p; return &table; }
            """, message: "this route never opens"),
        Broken(check: "save-restore-roundtrip", body: """
            static int saves;
            static berth_status save(berth_instance *i, const berth_sink *out, berth_error *e) { (void)i; (void)e; char b = (char)('a' + saves++); return out->write(out->context, (const uint8_t *)&b, 1); }
            static berth_status restore(berth_instance *i, berth_bytes s, berth_error *e) { (void)i; (void)s; (void)e; return BERTH_OK; }
            static berth_plugin_v1 table = {sizeof(berth_plugin_v1), BERTH_ABI_VERSION, "org.berth.broken", ok_create, ok_destroy, NULL, NULL, NULL, NULL, NULL, save, restore};
            const berth_plugin_v1 *broken_entry_v1(const berth_host_v1 *h, berth_plugin_handle *p) { (void)h; (void)p; return &table; }
            """, message: "different byte(s)"),
        Broken(check: "fresh-globals", body: """
            static berth_plugin_v1 table = {sizeof(berth_plugin_v1), BERTH_ABI_VERSION, "org.berth.broken", ok_create, ok_destroy};
            const berth_plugin_v1 *broken_entry_v1(const berth_host_v1 *h, berth_plugin_handle *p) {
                (void)h; (void)p;
                /* Shares one table across every loaded copy through the process environment. */
                const char *shared = getenv("BROKEN_TABLE");
                if (shared != NULL) return (const berth_plugin_v1 *)(uintptr_t)strtoull(shared, NULL, 16);
                berth_plugin_v1 *copy = malloc(sizeof *copy); *copy = table;
                char text[32]; snprintf(text, sizeof text, "%llx", (unsigned long long)(uintptr_t)copy); setenv("BROKEN_TABLE", text, 1);
                return copy;
            }
            """, message: "the second load returned the same table",
               isolatedMessage: "generation 2 runs in a worker of its own"),
        Broken(check: "crash", body: """
            static berth_status crashing_create(berth_screen_handle *s, const char *r, berth_bytes a, berth_instance **out, berth_error *e) {
                (void)s; (void)r; (void)a; (void)out; (void)e; volatile int *nowhere = NULL; *nowhere = 1; return BERTH_OK;
            }
            static berth_plugin_v1 table = {sizeof(berth_plugin_v1), BERTH_ABI_VERSION, "org.berth.broken", crashing_create, ok_destroy};
            const berth_plugin_v1 *broken_entry_v1(const berth_host_v1 *h, berth_plugin_handle *p) { (void)h; (void)p; return &table; }
            """, message: "the plugin crashed the check (signal 11, SIGSEGV)",
               isolatedMessage: "the worker of org.berth.broken crashed (SIGSEGV)"),
        // What a Swift trap does: print its fatal-error line, then execute a trap instruction.
        Broken(check: "trap", body: """
            #include <stdio.h>
            static berth_status trapping_create(berth_screen_handle *s, const char *r, berth_bytes a, berth_instance **out, berth_error *e) {
                (void)s; (void)r; (void)a; (void)out; (void)e;
                fprintf(stderr, "Broken/Broken.swift:10: Fatal error: Index out of range\\n"); fflush(stderr); __builtin_trap();
            }
            static berth_plugin_v1 table = {sizeof(berth_plugin_v1), BERTH_ABI_VERSION, "org.berth.broken", trapping_create, ok_destroy};
            const berth_plugin_v1 *broken_entry_v1(const berth_host_v1 *h, berth_plugin_handle *p) { (void)h; (void)p; return &table; }
            """, message: "the plugin crashed the check (signal \(trapSignal)): Broken/Broken.swift:10: Fatal error: Index out of range",
               isolatedMessage: "the worker of org.berth.broken crashed (\(trapSignal.split(separator: " ").last ?? "")): Broken/Broken.swift:10: Fatal error: Index out of range"),
    ]

    /// The signal a trap instruction raises here, as validate names it.
    static var trapSignal: String {
        #if arch(x86_64)
        "4, SIGILL"
        #else
        "5, SIGTRAP"
        #endif
    }

    @Test("a plugin broken in one way fails that named check, in its worker and in process", arguments: broken, ["process", "in-process"])
    func brokenFailsItsCheck(_ broken: Broken, isolation: String) throws {
        let workspace = PluginWorkspace()
        let body = broken.body.contains("snprintf") ? "#include <stdio.h>\n" + broken.body : broken.body
        let folder = try compileBrokenPlugin(workspace, folder: "broken", body: body) { manifest in
            if broken.check == "routes-open-close" { manifest["routes"] = ["main", "second"] }
        }
        let (status, checks, text) = try validate(folder, in: workspace, isolation: isolation)
        let passes = broken.passes(in: isolation)
        #expect(status == (passes ? 0 : 1), "\(text)")
        let check = broken.check == "crash" || broken.check == "trap" ? "create-destroy-twice" : broken.check
        let result = try #require(checks[check], "\(text)")
        #expect(result.hasPrefix(passes ? "pass" : "fail"), "\(check): \(result)")
        let message = isolation == "process" ? broken.isolatedMessage ?? broken.message : broken.message
        #expect(result.contains(message), "\(check): \(result)")
        let order = ["manifest-schema", "library-loads", "symbols-present", "abi-handshake"]
        for earlier in order.prefix(while: { $0 != check }) {
            #expect(checks[earlier]?.hasPrefix("pass") == true, "\(earlier) before \(check): \(checks[earlier] ?? "missing")")
        }
    }

    @Test("a broken manifest, a missing export and a slow scan fail their named checks")
    func staticAndScanChecks() throws {
        let workspace = PluginWorkspace()
        let okBody = table + "\nconst berth_plugin_v1 *broken_entry_v1(const berth_host_v1 *h, berth_plugin_handle *p) { (void)h; (void)p; return &table; }"
        let schema = try compileBrokenPlugin(workspace, folder: "schema", body: okBody) { $0["version"] = "one" }
        #expect(try validate(schema, in: workspace).checks["manifest-schema"]?.contains("is not a semantic version") == true)
        let symbols = try compileBrokenPlugin(workspace, folder: "symbols", body: okBody) {
            $0["id"] = "org.berth.symbols"
            $0["exports"] = [["symbol": "nowhere_to_be_found", "returns": "void"]]
        }
        let symbolChecks = try validate(symbols, in: workspace).checks
        #expect(symbolChecks["library-loads"]?.hasPrefix("pass") == true)
        #expect(symbolChecks["symbols-present"]?.contains("symbol 'nowhere_to_be_found' is not in libbroken.so's dynamic symbol table") == true)
        // A library padded to 240 MiB (under the 256 MiB limit of a library): hashing it alone
        // takes longer than 100 ms.
        let slowWorkspace = PluginWorkspace()
        let slow = try compileBrokenPlugin(slowWorkspace, folder: "slow", body: okBody)
        let handle = try #require(FileHandle(forWritingAtPath: slow + "/libbroken.so"))
        handle.seekToEndOfFile()
        for _ in 0..<30 { handle.write(Data(repeating: 0, count: 8 << 20)) }
        try handle.close()
        #expect(try validate(slow, in: slowWorkspace).checks["scan-time"]?.contains("over 100 ms") == true)
    }
}

@Suite("Plugin author path: new, build, pack, load", .serialized, .blocking, .buildsPackages)
struct AuthorPathTests {
    @Test("berth new for C: make, pack, load into a host, open the screen, send its action")
    func cPlugin() throws {
        let workspace = PluginWorkspace()
        let created = try BerthProcess.run(["new", "Wave", "--lang", "c", "--path", "wave"], in: workspace.root)
        #expect(created.status == 0, "\(created.standardError)")
        let (made, makeLog) = try ToolProcess.run("/usr/bin/make", ["-C", workspace.root + "/wave"], in: workspace.root)
        #expect(made == 0, "\(makeLog)")
        let packed = try BerthProcess.run(["pack", "wave", "--out", "plugins"], in: workspace.root)
        #expect(packed.status == 0, "\(packed.standardError)")
        #expect(packed.standardOutput.hasPrefix("packed com.example.wave 0.1.0 → plugins/com.example.wave (sha256 "))
        let manifest = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: workspace.plugins + "/com.example.wave/plugin.json"))) as! [String: Any]
        #expect((manifest["sha256"] as? String)?.count == 64)
        let session = try BerthProcess.run(["run", "--plugins", "plugins", "--script", "-"], in: workspace.root,
                                           input: "load com.example.wave\nopen wave\nsend wave Ada\n")
        #expect(session.status == 0, "\(session.standardError)")
        #expect(session.standardError.contains("Hello, Ada! (wave 1)"))
        let validated = try BerthProcess.run(["validate", "plugins/com.example.wave"], in: workspace.root)
        #expect(validated.status == 0, "\(validated.standardOutput)")
    }

    @Test("a C plugin's hand-written manifest is checked against its berth_describe_v1 (routes, persisted keys, actions): each mismatch one line naming the fact and both places")
    func cManifestMismatch() throws {
        let workspace = PluginWorkspace()
        let created = try BerthProcess.run(["new", "Wave", "--lang", "c", "--path", "wave"], in: workspace.root)
        try #require(created.status == 0, "\(created.standardError)")
        let describe = """

            berth_status berth_describe_v1(const berth_sink *out, berth_error *error) {
                (void)error;
                static const char json[] = "{\\"id\\": \\"com.example.wave\\", \\"routes\\": [\\"wave\\", \\"bye\\"], \\"persist\\": [\\"visits\\"], \\"actions\\": {\\"wave\\": [\\"wave\\"]}}";
                return out->write(out->context, (const uint8_t *)json, sizeof json - 1);
            }

            """
        let handle = try #require(FileHandle(forWritingAtPath: workspace.root + "/wave/wave.c"))
        handle.seekToEndOfFile()
        handle.write(Data(describe.utf8))
        try handle.close()
        let (made, makeLog) = try ToolProcess.run("/usr/bin/make", ["-C", workspace.root + "/wave"], in: workspace.root)
        try #require(made == 0, "\(makeLog)")

        let packed = try BerthProcess.run(["pack", "wave", "--out", "plugins"], in: workspace.root)
        #expect(packed.status == 1)
        #expect(packed.standardError.contains("wave/plugin.json: routes: libwave.so (berth_describe_v1) creates 'bye', plugin.json's routes do not list it"), "\(packed.standardError)")
        #expect(packed.standardError.contains("wave/plugin.json: persist: libwave.so (berth_describe_v1) uses the persisted key 'visits', plugin.json's persist does not declare it"), "\(packed.standardError)")
        #expect(packed.standardError.contains("wave/plugin.json: actions: libwave.so (berth_describe_v1) declares the action 'wave' for 'wave', plugin.json's actions do not list it"), "\(packed.standardError)")
        #expect(!FileManager.default.fileExists(atPath: workspace.plugins + "/com.example.wave"), "nothing is packed")

        let validated = try BerthProcess.run(["validate", "wave"], in: workspace.root)
        #expect(validated.status == 1)
        #expect(validated.standardOutput.contains("routes: libwave.so (berth_describe_v1) creates 'bye'"), "\(validated.standardOutput)")
    }

    @Test("berth new for Swift: no manifest, swift build with no edits, pack writes the manifest from the code; a screen, its actions and a @Persisted key added only in Swift appear in it")
    func swiftPlugin() throws {
        let workspace = PluginWorkspace()
        let created = try BerthProcess.run(["new", "Hello", "--path", "hello"], in: workspace.root)
        #expect(created.status == 0, "\(created.standardError)")
        #expect(!FileManager.default.fileExists(atPath: workspace.root + "/hello/plugin.json"), "no hand-written manifest")
        let sourcePath = workspace.root + "/hello/Sources/Hello/Hello.swift"
        let source = try String(contentsOfFile: sourcePath, encoding: .utf8)
        #expect(source.contains("@State var waves = 0"))
        #expect(source.split(separator: "\n").filter { !$0.trimmingCharacters(in: .whitespaces).isEmpty }.count <= 15, "\(source)")
        let package = try String(contentsOfFile: workspace.root + "/hello/Package.swift", encoding: .utf8)
        #expect(package.contains("/BerthSDK\")") && package.contains("package: \"berthsdk\""), "the package depends on the SDK package only: \(package)")
        let (built, buildLog) = try ToolProcess.run("/usr/bin/env", ["swift", "build", "--package-path", workspace.root + "/hello"], in: workspace.root)
        try #require(built == 0, "\(buildLog)")
        let checkouts = (try? FileManager.default.contentsOfDirectory(atPath: workspace.root + "/hello/.build/checkouts")) ?? []
        #expect(checkouts.isEmpty, "no remote package is resolved: \(checkouts)")
        let packed = try BerthProcess.run(["pack", "hello", "--out", "plugins"], in: workspace.root)
        #expect(packed.status == 0, "\(packed.standardError)")
        #expect(try packedManifest(workspace)["routes"] as? [String] == ["hello"])
        #expect(try packedManifest(workspace)["capabilities"] as? [String] == [], "the capabilities stated in code")
        let session = try BerthProcess.run(["run", "--plugins", "plugins", "--script", "-"], in: workspace.root,
                                           input: "load com.example.hello\nopen hello\nscreen\ntap 1\n")
        #expect(session.status == 0, "\(session.standardError)")
        #expect(session.standardOutput.contains("\"Waved 1 time(s)\""))
        let validated = try BerthProcess.run(["validate", "."], in: workspace.root + "/hello")
        #expect(validated.status == 0, "validate works in the package folder: \(validated.standardOutput)\(validated.standardError)")

        // A second screen, only in Swift: pack lists its route and its persisted key, and the
        // capability the code now states.
        let bye = """

            final class ByeScreen: Screen {
                static let route = "bye"
                static let actions: [ScreenAction] = ["wave", ScreenAction("leave", summary: "Says goodbye")]
                @Persisted("visits") var visits = 0
                init(context: ScreenContext) {}
            }

            """
        try (source.replacingOccurrences(of: "screens: [HelloScreen.self], capabilities: []",
                                         with: "screens: [HelloScreen.self, ByeScreen.self], capabilities: [.statePersist]") + bye)
            .write(toFile: sourcePath, atomically: true, encoding: .utf8)
        let (rebuilt, rebuildLog) = try ToolProcess.run("/usr/bin/env", ["swift", "build", "--package-path", workspace.root + "/hello"], in: workspace.root)
        try #require(rebuilt == 0, "\(rebuildLog)")
        let repacked = try BerthProcess.run(["pack", "hello", "--out", "plugins"], in: workspace.root)
        #expect(repacked.status == 0, "\(repacked.standardError)")
        let manifest = try packedManifest(workspace)
        #expect(manifest["routes"] as? [String] == ["hello", "bye"])
        #expect(manifest["persist"] as? [String] == ["visits"])
        #expect(manifest["capabilities"] as? [String] == ["state.persist"])
        // Only the screen that declares actions has an entry; a summary makes it an object.
        let actions = try #require(manifest["actions"] as? [String: [Any]], "\(manifest)")
        #expect(Array(actions.keys) == ["bye"])
        #expect(actions["bye"]?.first as? String == "wave")
        #expect(actions["bye"]?.last as? [String: String] == ["name": "leave", "summary": "Says goodbye"])
        let reopened = try BerthProcess.run(["run", "--plugins", "plugins", "--script", "-"], in: workspace.root, input: "load com.example.hello\nopen bye\nactions\n")
        #expect(reopened.status == 0, "\(reopened.standardError)")
        #expect(RunningHost.squeezed(reopened.standardOutput).contains("leave Says goodbye"), "\(reopened.standardOutput)")
    }

    private func packedManifest(_ workspace: PluginWorkspace) throws -> [String: Any] {
        let data = try Data(contentsOf: URL(fileURLWithPath: workspace.plugins + "/com.example.hello/plugin.json"))
        return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }
}
