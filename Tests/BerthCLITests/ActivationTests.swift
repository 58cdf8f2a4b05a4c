import BerthTestSupport
import Foundation
import Testing

/// Dropped plugins are ready: `berth run` loads every valid plugin at start, or on first
/// use when lazy.
@Suite("berth run: plugins load at start, or on first use", .blocking)
struct ActivationTests {
    private func run(_ arguments: [String], _ workspace: PluginWorkspace, _ script: String) throws -> BerthProcess.Output {
        try BerthProcess.run(["run", "--plugins", "plugins", "--no-socket"] + arguments + ["--script", "-"], in: workspace.root, input: script)
    }

    @Test("open counter works with no load command")
    func openWithoutLoad() throws {
        let workspace = PluginWorkspace()
        workspace.stage("counter.json")
        let output = try run([], workspace, "open counter\nquit\n")
        #expect(output.status == 0, "\(output.standardError)")
        #expect(output.standardOutput.contains("com.example.counter: generation 1 loaded"))
        #expect(output.standardOutput.contains("screen 1: com.example.counter/counter created (generation 1)"), "\(output.standardOutput)")
    }

    @Test("--lazy defers every plugin: plugins shows discovered (lazy); opening a route or calling an export loads it")
    func lazyFlag() throws {
        let workspace = PluginWorkspace()
        workspace.stage("counter.json")
        workspace.stage("greeter.json")
        let output = try run(["--lazy"], workspace, "plugins\nopen counter\ncall com.example.greeter greeter_add 2 40\nplugins\n")
        #expect(output.status == 0, "\(output.standardError)")
        let beforeOpen = output.standardOutput.components(separatedBy: "> open counter")[0]
        #expect(!beforeOpen.contains("generation 1 loaded"), "\(beforeOpen)")
        #expect(beforeOpen.contains("com.example.counter  1.0.0    swift    discovered (lazy)"), "\(beforeOpen)")
        #expect(output.standardOutput.contains("greeter_add → 42"))
        let last = output.standardOutput.components(separatedBy: "> plugins").last ?? ""
        #expect(last.contains("com.example.counter  1.0.0    swift    loaded") && last.contains("com.example.greeter  1.2.0    c        loaded"), "\(last)")
    }

    @Test("a manifest's \"activation\": \"lazy\" defers that plugin only")
    func lazyManifest() throws {
        let workspace = PluginWorkspace()
        workspace.stage("counter.json") { $0["activation"] = "lazy" }
        workspace.stage("greeter.json")
        let output = try run([], workspace, "plugins\n")
        #expect(output.status == 0, "\(output.standardError)")
        #expect(output.standardOutput.contains("com.example.counter  1.0.0    swift    discovered (lazy)"), "\(output.standardOutput)")
        #expect(output.standardOutput.contains("com.example.greeter: generation 1 loaded"))
    }

    @Test("an activation that is neither eager nor lazy is a manifest error naming the field")
    func badActivation() throws {
        let workspace = PluginWorkspace()
        workspace.stage("counter.json") { $0["activation"] = "sometimes" }
        let output = try BerthProcess.run(["validate", "--static", "plugins/com.example.counter"], in: workspace.root)
        #expect(output.status == 1)
        #expect(output.standardOutput.contains("activation: 'sometimes' is not an activation (expected \"eager\" or \"lazy\")"), "\(output.standardOutput)")
    }

    @Test("open of a route whose plugin is invalid says why it is invalid")
    func openInvalid() throws {
        let workspace = PluginWorkspace()
        workspace.stage("counter.json") { $0["entry"] = "nobody_v1" }
        let output = try run([], workspace, "open counter\n")
        #expect(output.status == 1)
        #expect(output.standardError.contains("route 'counter' is provided by com.example.counter, which is invalid:"), "\(output.standardError)")
        #expect(output.standardError.contains("symbol 'nobody_v1'"), "\(output.standardError)")
    }

    @Test("a missing plugins folder is a warning for run, and --watch creates it")
    func missingFolder() throws {
        let workspace = PluginWorkspace()
        let plain = try BerthProcess.run(["run", "--plugins", "nope", "--no-socket", "--script", "-"], in: workspace.root, input: "plugins\n")
        #expect(plain.status == 0, "\(plain.standardError)")
        #expect(plain.standardError.contains("warning: the plugins folder nope does not exist"), "\(plain.standardError)")
        let watching = try BerthProcess.run(["run", "--plugins", "later", "--watch", "--no-socket", "--script", "-"], in: workspace.root, input: "quit\n")
        #expect(watching.status == 0, "\(watching.standardError)")
        #expect(FileManager.default.fileExists(atPath: workspace.root + "/later"))
    }
}

@Suite("berth list and berth new: routes that collide", .blocking)
struct RouteCollisionTests {
    @Test("list warns about a route two plugins provide")
    func duplicateRoutes() throws {
        let workspace = PluginWorkspace()
        workspace.stage("counter.json")
        workspace.stage("counter.json", as: "copy") { $0["id"] = "com.example.counter2" }
        let output = try BerthProcess.run(["list", "--plugins", "plugins"], in: workspace.root)
        #expect(output.status == 0)
        #expect(output.standardOutput.contains("warning: route 'counter' is provided by com.example.counter and com.example.counter2; open it as PLUGIN/ROUTE"),
                "\(output.standardOutput)")
    }

    @Test("berth new picks a route no plugin in ../plugins has")
    func newRoute() throws {
        let workspace = PluginWorkspace()
        workspace.stage("greeter.json")
        let output = try BerthProcess.run(["new", "Hello", "--lang", "c"], in: workspace.root)
        #expect(output.status == 0, "\(output.standardError)")
        let manifest = try String(contentsOfFile: workspace.root + "/Hello/plugin.json", encoding: .utf8)
        #expect(manifest.contains("\"hello-2\""), "\(manifest)")
        let fresh = PluginWorkspace()
        _ = try BerthProcess.run(["new", "Hello", "--lang", "c"], in: fresh.root)
        #expect(try String(contentsOfFile: fresh.root + "/Hello/plugin.json", encoding: .utf8).contains("\"hello\""))
    }

    @Test("berth new picks an id no plugin in ../plugins has, so packing it replaces nothing")
    func newID() throws {
        let workspace = PluginWorkspace()
        workspace.stage("greeter.json") { $0["id"] = "com.example.hello" }
        let output = try BerthProcess.run(["new", "Hello", "--lang", "c"], in: workspace.root)
        #expect(output.status == 0, "\(output.standardError)")
        let manifest = try String(contentsOfFile: workspace.root + "/Hello/plugin.json", encoding: .utf8)
        #expect(manifest.contains("\"com.example.hello-2\""), "\(manifest)")
        #expect(output.standardOutput.contains("created com.example.hello-2 (c)"), "\(output.standardOutput)")
        // A folder of that name (a plugin of another id, or none) counts as taken too.
        try FileManager.default.createDirectory(atPath: workspace.plugins + "/com.example.wave", withIntermediateDirectories: true)
        let wave = try BerthProcess.run(["new", "Wave", "--lang", "c"], in: workspace.root)
        #expect(wave.standardOutput.contains("created com.example.wave-2 (c)"), "\(wave.standardOutput)")
        // A taken --id is kept, with a note; no note when the command fails.
        let kept = try BerthProcess.run(["new", "Other", "--lang", "c", "--id", "com.example.hello"], in: workspace.root)
        #expect(kept.standardOutput.contains("note: plugins already holds com.example.hello; packing this one there replaces it"), "\(kept.standardOutput)")
        let failed = try BerthProcess.run(["new", "Other", "--lang", "c", "--id", "com.example.hello"], in: workspace.root)
        #expect(failed.status != 0)
        #expect(!failed.standardOutput.contains("note:"))
    }
}

@Suite("berth run: text a person reads", .blocking)
struct HumanOutputTests {
    @Test("control bytes in a command are shown, never sent raw, in the echo and the error")
    func controlBytes() throws {
        let workspace = PluginWorkspace()
        let output = try BerthProcess.run(["run", "--plugins", "plugins", "--script", "-"], in: workspace.root, input: "open \u{1B}[31mx\n")
        #expect(output.status == 1)
        #expect(output.standardError.contains("^[[31mx"), "\(output.standardError)")
        #expect(!output.standardError.contains("\u{1B}") && !output.standardOutput.contains("\u{1B}"))
    }

    @Test("state shows the values of built-in types, in view state and persisted")
    func stateValues() throws {
        let workspace = PluginWorkspace()
        workspace.stage("counter.json")
        let output = try BerthProcess.run(["run", "--plugins", "plugins", "--state-dir", "state", "--script", "-"], in: workspace.root,
                                          input: "open counter\nstep 1 +\nstep 1 +\nstate\ntap 2\nstate\n")
        #expect(output.status == 0, "\(output.standardError)")
        #expect(output.standardOutput.contains("com.example.counter#1/CounterScreen/VStack.1/CounterPanel[0]  = 2 (Int)"), "\(output.standardOutput)")
        #expect(output.standardOutput.contains("  com.example.counter/total  = 2 (Int)"), "\(output.standardOutput)")
    }

    @Test("view input and routes typed as text are parsed at the shell's edge: a malformed value or route is one line naming it")
    func malformedInputAndRoutes() throws {
        let workspace = PluginWorkspace()
        workspace.stage("counter.json")
        let output = try BerthProcess.run(["run", "--plugins", "plugins", "--script", "-"], in: workspace.root,
                                          input: "open com.example.counter//counter\nopen counter\nstep 1 x\nselect 1 two\nstep 1 +\nstate\n")
        #expect(output.status == 1)
        let errors = output.standardError.split(separator: "\n").filter { $0.hasPrefix("error: ") }
        #expect(errors == [
            "error: route 'com.example.counter//counter' has more than one '/' (write PLUGIN.ID/ROUTE or ROUTE) (did you mean 'com.example.counter/counter'?)",
            "error: step takes + or -, got 'x'",
            "error: select takes an option index (0, 1, …), got 'two'",
        ], "\(output.standardError)")
        // The well-formed step after them still reaches the plugin.
        #expect(output.standardOutput.contains("com.example.counter#1/CounterScreen/VStack.1/CounterPanel[0]  = 1 (Int)"), "\(output.standardOutput)")
    }

    @Test("berth host --help explains itself without a host")
    func hostHelp() throws {
        let output = try BerthProcess.run(["host", "--help"], in: NSTemporaryDirectory())
        #expect(output.status == 0, "\(output.standardError)")
        #expect(output.standardOutput.contains("HOST COMMANDS:") && output.standardOutput.contains("open ROUTE"), "\(output.standardOutput)")
    }
}

@Suite("berth: shell completion", .blocking)
struct ShellCompletionTests {
    @Test("the completion scripts' callback offers plugin ids and routes from the plugins folder")
    func idsAndRoutes() throws {
        let workspace = PluginWorkspace()
        workspace.stage("counter.json")
        // What the generated bash script runs for `berth call <Tab>` and `berth host open <Tab>`.
        let ids = try BerthProcess.run(["---completion", "call", "--", "positional@0", "2", "0", "berth", "call", ""], in: workspace.root)
        #expect(ids.standardOutput.split(separator: "\n").contains("com.example.counter"), "\(ids.standardOutput) \(ids.standardError)")
        let routes = try BerthProcess.run(["---completion", "host", "--", "positional@0", "3", "0", "berth", "host", "open", ""], in: workspace.root)
        #expect(routes.standardOutput.split(separator: "\n").contains("counter"), "\(routes.standardOutput) \(routes.standardError)")
    }
}
