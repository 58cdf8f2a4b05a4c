import Foundation
import Testing
import BerthTestSupport
@testable import BerthCLI
@_spi(Engine) import BerthRuntime

/// Messages a new plugin author met on their first day (the walkthrough of issue 30), as the
/// real `berth` binary prints them.
@Suite("berth: first-day wording", .blocking)
struct NewUserWordingTests {
    @Test("open with a typo in the plugin id says only the did-you-mean, not 'not loaded (load it first)'")
    func openTypoInPluginID() throws {
        let workspace = PluginWorkspace()
        workspace.stage("counter.json")
        let output = try BerthProcess.run(["run", "--plugins", "plugins", "--no-socket", "--script", "-"], in: workspace.root,
                                          input: "open com.example.countr/counter\n")
        let errors = output.standardError.split(separator: "\n").filter { $0.hasPrefix("error: ") }
        #expect(errors == ["error: com.example.countr/counter: did you mean 'com.example.counter/counter'?"], "\(output.standardError)")
    }

    @Test("$BERTH_WORKER naming no file: an isolated plugin's error names that path and how to fix it once, its dependent names it; in process, only the trial run is skipped",
          arguments: ["process", "in-process"])
    func workerMissing(isolation: String) throws {
        let workspace = PluginWorkspace()
        workspace.stage("greeter.json")
        workspace.stage("inbox.json")  // requires com.example.greeter
        let output = try BerthProcess.run(["run", "--plugins", "plugins", "--isolation", isolation, "--no-socket", "--script", "-"],
                                          in: workspace.root, input: "status\n", extraEnvironment: ["BERTH_WORKER": "/nonexistent/berth-worker"])
        let errors = output.standardError.split(separator: "\n").filter { $0.hasPrefix("error: ") }
        guard isolation == "process" else {
            #expect(errors.isEmpty, "\(output.standardError)")
            #expect(output.standardOutput.contains("  · host: no berth-worker at /nonexistent/berth-worker: in-process plugins load without a trial run"),
                    "\(output.standardOutput)")
            #expect(output.standardOutput.contains("loaded: 2 plugin(s)"), "\(output.standardOutput)")
            return
        }
        let missing = "cannot start a worker: no worker executable at /nonexistent/berth-worker"
            + " (build the berth-worker product; put it beside the host's executable or name it in $BERTH_WORKER)"
        #expect(errors == [
            "error: com.example.greeter: \(missing)",
            "error: com.example.inbox: requires com.example.greeter, which did not load: \(missing)",
        ], "\(output.standardError)")
    }

    @Test("berth new's README says what the template asks of the host and points at the tutorial of its language", arguments: ["swift", "c"])
    func newReadme(language: String) throws {
        let workspace = PluginWorkspace()
        let output = try BerthProcess.run(["new", "Hello", "--lang", language], in: workspace.root)
        #expect(output.status == 0, "\(output.standardError)")
        let readme = try String(contentsOfFile: workspace.root + "/Hello/README.md", encoding: .utf8)
        let asks = language == "swift" ? "asks the host only to log and keep view state" : "asks the host only to log."
        let tutorial = language == "swift" ? "/Docs/first-plugin.md." : "/Docs/c-plugins.md."
        #expect(readme.contains(asks) && readme.contains(tutorial), "\(readme)")
        // Nothing of this machine: the checkout and `berth` are named from the package's folder.
        let words = readme.split { $0.isWhitespace || "()`".contains($0) }
        #expect(!words.contains { $0.hasPrefix("/") }, "no absolute path: \(readme)")
        let checkout = PluginTemplate.relative(PluginTemplate.berthSourceRoot, from: workspace.root + "/Hello")
        #expect(readme.contains("\(checkout)\(tutorial)"), "\(readme)")
        let berth = PluginTemplate.relative(BuildProducts.berth, from: workspace.root + "/Hello")
        #expect(readme.contains("\(berth) pack . --out ../plugins"), "\(readme)")
        #expect(FileManager.default.isExecutableFile(atPath: workspace.root + "/Hello/" + berth), "\(berth)")
    }

    @Test("a worker found nowhere: the error names every path looked at, on one line")
    func workerNotFound() throws {
        // A copy of berth with no berth-worker beside it, run where there is no .build.
        let workspace = PluginWorkspace()
        workspace.stage("greeter.json")
        let copy = workspace.root + "/bin/berth"
        try FileManager.default.createDirectory(atPath: workspace.root + "/bin", withIntermediateDirectories: true)
        // Copied by cp, not by this process: a child another test forks meanwhile would inherit
        // a descriptor open for writing, and the copy could not be executed (ETXTBSY).
        let (copied, copyOutput) = try ToolProcess.run("/bin/cp", [BuildProducts.berth, copy], in: workspace.root)
        try #require(copied == 0, "\(copyOutput)")
        let output = try BerthProcess.run(["run", "--plugins", "plugins", "--isolation", "process", "--no-socket", "--script", "-"],
                                          in: workspace.root, input: "status\n", executable: copy, removingEnvironment: ["BERTH_WORKER"])
        let errors = output.standardError.split(separator: "\n").filter { $0.hasPrefix("error: ") }
        let real = URL(fileURLWithPath: workspace.root).resolvingSymlinksInPath().path
        let places = ["\(real)/bin", "\(real)/.build/debug", "\(real)/.build/release"].map { $0 + "/berth-worker" }
        #expect(errors == ["error: com.example.greeter: cannot start a worker: no worker executable at any of \(places.joined(separator: ", "))"
            + " (build the berth-worker product; put it beside the host's executable or name it in $BERTH_WORKER)"], "\(output.standardError)")
    }

    @Test("pack of a folder named in another case suggests the folder that is there")
    func packSuggestsFolderCase() throws {
        let workspace = PluginWorkspace()
        try FileManager.default.createDirectory(atPath: workspace.root + "/Tasks", withIntermediateDirectories: true)
        let output = try BerthProcess.run(["pack", "tasks", "--out", "plugins"], in: workspace.root)
        #expect(output.status != 0)
        #expect(output.standardError == "error: tasks: no such file or folder (did you mean 'Tasks'?)\n", "\(output.standardError)")
        let far = try BerthProcess.run(["pack", "zzz", "--out", "plugins"], in: workspace.root)
        #expect(far.standardError == "error: zzz: no such file or folder\n", "\(far.standardError)")
    }

    @Test("pack's capability warnings read as sentences: 'its code opens …', 'its code resolves …'; a plugin's own services warn about nothing")
    func warningGrammar() throws {
        let workspace = PluginWorkspace()
        let sources = workspace.root + "/pkg/Sources/Tasks"
        try FileManager.default.createDirectory(atPath: sources, withIntermediateDirectories: true)
        let code = #"_ = try context.push("com.example.tags/pick"); _ = try context.resolveService("com.example.greeter/Greeting")"#
            + "\n" + #"_ = try context.resolveService("com.nu.tasks/Tasks.Stats"); _ = try context.resolve(Stats.self)"#
        try code.write(toFile: sources + "/Tasks.swift", atomically: true, encoding: .utf8)
        let uses = SourceFacts.usedCapabilities(inPackage: workspace.root + "/pkg", library: "libTasks.so", pluginID: "com.nu.tasks")
        #expect(uses.map(\.capability) == [.navigateAny, .servicesConsume], "\(uses)")
        let manifest = try #require(PluginManifest.decode(Data(#"""
            {"id": "com.nu.tasks", "name": "Tasks", "version": "1.0.0", "abi": "1.0", "library": "libTasks.so",
             "entry": "berth_tasks_entry_v1", "runtime": "swift", "routes": ["tasks"], "capabilities": []}
            """#.utf8), path: "plugin.json").manifest)
        let warnings = CapabilityUse.warnings(for: manifest, sourceUses: uses)
        #expect(warnings.count == 2)
        #expect(warnings.first?.hasPrefix("com.nu.tasks: its code opens com.example.tags/pick but its capabilities lack .navigateAny") == true, "\(warnings)")
        #expect(warnings.last?.hasPrefix("com.nu.tasks: its code resolves com.example.greeter/Greeting but its capabilities lack .servicesConsume") == true,
                "\(warnings)")
    }
}
