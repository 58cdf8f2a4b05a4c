import Foundation
import Testing
import BerthTestSupport

/// The CLI as a user runs it: the built binary, in a folder with staged plugins, its
/// output compared with stored text (paths of the temporary folder replaced by $ROOT).
@Suite("berth CLI", .blocking)
struct CLITests {
    private func run(_ arguments: [String], in workspace: PluginWorkspace, input: String? = nil) throws -> BerthProcess.Output {
        var output = try BerthProcess.run(arguments, in: workspace.root, input: input)
        // Timings vary run to run: compare them as `_`.
        output.standardOutput = output.standardOutput.replacingOccurrences(of: #"in [0-9.]+ ms"#, with: "in _ ms", options: .regularExpression)
            .replacingOccurrences(of: #"pid [0-9]+"#, with: "pid _", options: .regularExpression)
            .replacingOccurrences(of: #"(validate|canary|copy\+hash|dlopen|handshake|close old screens|reopen|restore) [0-9.]+"#, with: "$1 _",
                                  options: .regularExpression)
        output.standardOutput = output.standardOutput.replacingOccurrences(of: workspace.root, with: "$ROOT")
        output.standardError = output.standardError.replacingOccurrences(of: workspace.root, with: "$ROOT")
        return output
    }

    private func examplePlugins() -> PluginWorkspace {
        let workspace = PluginWorkspace()
        workspace.stage("counter.json")
        workspace.stage("greeter.json")
        return workspace
    }

    @Test("list shows Counter and Greeter as valid")
    func list() throws {
        let workspace = examplePlugins()
        let output = try run(["list", "--plugins", "plugins"], in: workspace)
        #expect(output.status == 0)
        #expect(output.standardOutput == ExpectedOutput.text("list", actual: output.standardOutput))
    }

    @Test("list --json is stable and machine-readable")
    func listJSON() throws {
        let workspace = examplePlugins()
        let output = try run(["list", "--plugins", "plugins", "--json"], in: workspace)
        #expect(output.status == 0)
        #expect(output.standardOutput == ExpectedOutput.text("list-json", actual: output.standardOutput))
        let rows = try #require(try JSONSerialization.jsonObject(with: Data(output.standardOutput.utf8)) as? [[String: Any]])
        #expect(rows.map { $0["id"] as? String } == ["com.example.counter", "com.example.greeter"])
        #expect(rows.allSatisfy { $0["state"] as? String == "valid" })
    }

    @Test("list reports broken plugins with one line per problem and still lists the good ones")
    func listBroken() throws {
        let workspace = examplePlugins()
        workspace.stage("greeter.json", as: "no-entry") { $0["id"] = "com.broken.no-entry"; $0["entry"] = "nobody_v1" }
        workspace.stage("counter.json", as: "escape") { $0["id"] = "com.broken.escape"; $0["library"] = "../x.so" }
        let output = try run(["list", "--plugins", "plugins"], in: workspace)
        #expect(output.status == 0)
        #expect(output.standardOutput == ExpectedOutput.text("list-broken", actual: output.standardOutput))
    }

    @Test("validate passes good plugins and prints path: field: message for bad ones, exit 1")
    func validate() throws {
        let workspace = examplePlugins()
        workspace.stage("greeter.json", as: "bad") {
            $0["id"] = "Bad"
            $0["version"] = "1"
            $0["exports"] = [["symbol": "greeter_add", "params": ["int32", "complex"], "returns": "int32"]]
            $0["colour"] = "blue"
        }
        let good = try run(["validate", "plugins/com.example.counter", "plugins/com.example.greeter/plugin.json"], in: workspace)
        #expect(good.status == 0)
        #expect(good.standardOutput == ExpectedOutput.text("validate-good", actual: good.standardOutput))
        let bad = try run(["validate", "plugins/bad"], in: workspace)
        #expect(bad.status == 1)
        #expect(bad.standardOutput == ExpectedOutput.text("validate-bad", actual: bad.standardOutput))
    }

    struct Call: Sendable, CustomTestStringConvertible {
        let arguments: [String]
        let output: String
        var testDescription: String { arguments.joined(separator: " ") }
    }

    static let calls: [Call] = [
        Call(arguments: ["greeter_greet", "Ada Lovelace"], output: "Hello, Ada Lovelace!\n"),
        Call(arguments: ["greeter_add", "-2", "44"], output: "42\n"),
        Call(arguments: ["greeter_average", "1.5", "2"], output: "1.75\n"),
        Call(arguments: ["greeter_scale", "1.5", "-2"], output: "-3.0\n"),
        Call(arguments: ["greeter_is_even", "9000000000"], output: "true\n"),
        Call(arguments: ["greeter_reverse", "hex:010203ff"], output: "hex:ff030201\n"),
        Call(arguments: ["greeter_calls"], output: "0\n"),
    ]

    @Test("call invokes a Greeter export of each signature through libffi", arguments: calls)
    func call(_ call: Call) throws {
        let workspace = examplePlugins()
        let output = try run(["call", "--plugins", "plugins", "com.example.greeter"] + call.arguments, in: workspace)
        #expect(output.status == 0, "\(output.standardError)")
        #expect(output.standardOutput == call.output)
    }

    @Test("call --json prints the type and value")
    func callJSON() throws {
        let workspace = examplePlugins()
        let output = try run(["call", "--plugins", "plugins", "--json", "com.example.greeter", "greeter_add", "1", "2"], in: workspace)
        #expect(output.standardOutput == "{\"type\":\"int32\",\"value\":\"3\"}\n")
    }

    struct BadCall: Sendable, CustomTestStringConvertible {
        let arguments: [String]
        let error: String
        var testDescription: String { arguments.joined(separator: " ") }
    }

    static let badCalls: [BadCall] = [
        BadCall(arguments: ["com.example.greeter", "greeter_add", "1"],
                error: "error: greeter_add takes 2 argument(s) (int32 greeter_add(int32, int32)), got 1\n"),
        BadCall(arguments: ["com.example.greeter", "greeter_add", "1", "2147483648"],
                error: "error: argument 2 of greeter_add: '2147483648' overflows int32 (-2147483648...2147483647)\n"),
        BadCall(arguments: ["com.example.greeter", "greeter_is_even", "ten"],
                error: "error: argument 1 of greeter_is_even: 'ten' is not an integer\n"),
        BadCall(arguments: ["com.example.greeter", "greeter_shout"],
                error: "error: com.example.greeter has no export 'greeter_shout' (exports: greeter_greet, greeter_add, greeter_average, greeter_scale, greeter_is_even, greeter_reverse, greeter_calls)\n"),
        BadCall(arguments: ["com.example.nobody", "f"],
                error: "error: no plugin 'com.example.nobody' in plugins\n"),
        BadCall(arguments: ["com.example.greter", "greeter_add", "1", "2"],
                error: "error: no plugin 'com.example.greter' in plugins (did you mean 'com.example.greeter'?)\n"),
    ]

    @Test("a bad call is a one-line error on stderr with exit code 2", arguments: badCalls)
    func badCall(_ call: BadCall) throws {
        let workspace = examplePlugins()
        let output = try run(["call", "--plugins", "plugins"] + call.arguments, in: workspace)
        #expect(output.status == 2)
        #expect(output.standardOutput.isEmpty)
        #expect(output.standardError == call.error)
    }

    @Test("run --script shows discovery, load, screens, calls, reload with fresh globals, unload")
    func runScript() throws {
        let workspace = examplePlugins()
        let script = """
            load all
            call com.example.counter counter_bump
            call com.example.counter counter_bump
            open counter
            send increment
            reload com.example.counter
            call com.example.counter counter_bump
            screens
            unload com.example.greeter
            plugins
            """
        let output = try run(["run", "--plugins", "plugins", "--script", "-"], in: workspace, input: script)
        #expect(output.status == 0, "\(output.standardError)")
        #expect(output.standardOutput == ExpectedOutput.text("run-script", actual: output.standardOutput))
    }

    @Test("a failing script command is reported, the host goes on, and the exit status is 1")
    func runScriptFailure() throws {
        let workspace = examplePlugins()
        let output = try run(["run", "--plugins", "plugins", "--script", "-"], in: workspace,
                             input: "load com.example.nobody\nfrobnicate\nload com.example.greeter\nplugins\n")
        #expect(output.status == 1)
        #expect(output.standardError.contains("error: com.example.nobody: no such plugin"))
        #expect(output.standardError.contains("error: unknown command 'frobnicate' (try help)"))
        #expect(output.standardOutput.contains("com.example.greeter  1.2.0    c        loaded  1"))
    }
}

@Suite("berth CLI exit codes", .blocking)
struct CLIExitCodeTests {
    @Test("a usage error from argument parsing exits 2 with the message on stderr")
    func usageErrors() throws {
        let workspace = PluginWorkspace()
        for arguments in [["call"], ["validate"], ["list", "--frobnicate"]] {
            let output = try BerthProcess.run(arguments, in: workspace.root)
            #expect(output.status == 2, "\(arguments)")
            #expect(output.standardError.hasPrefix("error: "), "\(arguments)")
            #expect(output.standardOutput.isEmpty)
        }
    }

    @Test("run with a missing script fails before discovering anything")
    func missingScript() throws {
        let workspace = PluginWorkspace()
        workspace.stage("greeter.json")
        let output = try BerthProcess.run(["run", "--plugins", "plugins", "--script", "nope.berth"], in: workspace.root)
        #expect(output.status == 2)
        #expect(output.standardOutput.isEmpty)
        #expect(output.standardError.contains("cannot open script nope.berth"))
    }

    @Test("new --berth with a folder that is not a Berth checkout exits 2, naming the file it lacks, and creates nothing")
    func newChecksBerth() throws {
        let workspace = PluginWorkspace()
        let output = try BerthProcess.run(["new", "Hello", "--berth", "/nonexistent"], in: workspace.root)
        #expect(output.status == 2)
        #expect(output.standardError.contains("error: --berth: /nonexistent is not a Berth checkout: /nonexistent/BerthSDK/Package.swift does not exist"), "\(output.standardError)")
        #expect(!FileManager.default.fileExists(atPath: workspace.root + "/Hello"))
    }

    @Test("new, validate and run take one-character paths (Foundation's deletingLastPathComponent traps on them)")
    func oneCharacterPaths() throws {
        let workspace = PluginWorkspace()
        let created = try BerthProcess.run(["new", "Hello", "--path", "h"], in: workspace.root)
        #expect(created.status == 0, "\(created.standardError)")
        #expect(FileManager.default.fileExists(atPath: workspace.root + "/h/Sources/Hello/Hello.swift"))
        let socket = try BerthProcess.run(["run", "--plugins", "h", "--socket", "s", "--script", "-"], in: workspace.root, input: "status\n")
        #expect(socket.status == 0, "\(socket.standardError)")
        #expect(socket.standardOutput.contains("control socket: s"), "\(socket.standardOutput)")
    }

    @Test("call on a plugin that did not validate exits 1 and says why")
    func invalidPlugin() throws {
        let workspace = PluginWorkspace()
        workspace.stage("greeter.json") { $0["entry"] = "nobody_v1" }
        let output = try BerthProcess.run(["call", "--plugins", "plugins", "com.example.greeter", "greeter_calls"], in: workspace.root)
        #expect(output.status == 1)
        #expect(output.standardError.contains("com.example.greeter is not valid: plugins/com.example.greeter/libGreeter.so: entry: symbol 'nobody_v1'"))
    }
}

@Suite("berth validate --static", .blocking)
struct ValidateStaticTests {
    @Test("two folders with one id: the second is refused naming the first, as list shows it")
    func duplicateIDs() throws {
        let workspace = PluginWorkspace()
        workspace.stage("greeter.json", as: "one")
        workspace.stage("greeter.json", as: "two")
        let output = try BerthProcess.run(["validate", "--static", "plugins/one", "plugins/two"], in: workspace.root)
        #expect(output.status == 1)
        #expect(output.standardOutput.contains("plugins/one: ok (com.example.greeter, unsigned)"))
        #expect(output.standardOutput.contains("plugins/two/plugin.json: id: 'com.example.greeter' is already provided by plugins/one"), "\(output.standardOutput)")
    }
}

@Suite("berth run: advice the CLI adds to the host's events", .blocking)
struct EventAdviceTests {
    @Test("retired images past --max-retired-mb: the host reports it once, and the CLI suggests berth restart")
    func retiredLimitAdvice() throws {
        let workspace = PluginWorkspace()
        workspace.stage("counter.json")
        let output = try BerthProcess.run(["run", "--plugins", "plugins", "--isolation", "in-process", "--max-retired-mb", "0", "--script", "-"],
                                          in: workspace.root, input: "load all\nreload com.example.counter\nreload com.example.counter\n")
        #expect(output.status == 0, "\(output.standardError)")
        let advice = output.standardOutput.components(separatedBy: "run `berth restart` to start a fresh process").count - 1
        #expect(advice == 1, "\(output.standardOutput)")
    }
}

@Suite("berth: small things a user expects", .blocking)
struct CLIBasicsTests {
    @Test("--version names the version and the plugin ABI")
    func version() throws {
        let output = try BerthProcess.run(["--version"], in: NSTemporaryDirectory())
        #expect(output.status == 0)
        #expect(output.standardOutput.hasPrefix("berth ") && output.standardOutput.contains("plugin ABI 1.2"), "\(output.standardOutput)")
    }

    @Test("list with a plugins folder that does not exist is an error naming it")
    func listMissingFolder() throws {
        let output = try BerthProcess.run(["list", "--plugins", "/nonexistent-berth-folder"], in: NSTemporaryDirectory())
        #expect(output.status == 2)
        #expect(output.standardError.contains("error: --plugins /nonexistent-berth-folder: no such folder"), "\(output.standardError)")
    }
}
