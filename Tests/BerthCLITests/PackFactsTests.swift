import Foundation
import Testing
import BerthTestSupport
@testable import BerthCLI
@_spi(Engine) import BerthRuntime

/// `berth pack` on a Swift package writes every fact its code states, whatever branch the
/// code sits in, and warns about what the code uses that its capabilities do not grant.
@Suite("berth pack: facts from every branch, capability warnings", .serialized, .blocking, .buildsPackages)
struct PackFactsTests {
    /// A screen whose persisted keys sit where the describe render never goes: in a view
    /// behind `if` (its condition false at first) and in a `ForEach` row (no rows at first).
    static let source = """
        import BerthSDK

        final class TasksScreen: Screen {
            static let route = "tasks"
            init(context: ScreenContext) {}
            var body: some View { TaskList() }
        }

        struct TaskList: View {
            @Persisted("tasks") var tasks: [String] = []
            @State var open = false
            var body: some View {
                VStack {
                    Button("Add") { tasks.append("task \\(tasks.count + 1)") }
                    Button("Notes") { open.toggle() }
                    if open { NoteField() }
                    ForEach(tasks, id: \\.self) { title in TaskRow(title: title) }
                }
            }
        }

        struct NoteField: View {
            @Persisted("notes") var notes = ""
            var body: some View { TextField("Notes", text: $notes) }
        }

        struct TaskRow: View {
            let title: String
            // A comment naming @Persisted("not-a-key") states nothing.
            @Persisted(wrappedValue: false, "starred") var starred: Bool
            var body: some View { Toggle(title, isOn: $starred) }
        }

        @_cdecl("berth_tasks_entry_v1")
        public func entry(_ host: UnsafeRawPointer?, _ plugin: UnsafeRawPointer?) -> UnsafeRawPointer? {
            Plugin(id: "com.nu.tasks", screens: [TasksScreen.self], capabilities: [.statePersist]).export(host, plugin)
        }

        """

    @Test("@Persisted keys behind if and in ForEach rows reach plugin.json and persist; arrays persist as they are and state shows them decoded; a manifest without state.persist warns in Swift's spelling; a stale persist list fails in one line per key")
    func keysFromEveryBranch() throws {
        let workspace = PluginWorkspace()
        let created = try BerthProcess.run(["new", "Tasks", "--path", "tasks", "--id", "com.nu.tasks"], in: workspace.root)
        try #require(created.status == 0, "\(created.standardError)")
        let sources = try FileManager.default.contentsOfDirectory(atPath: workspace.root + "/tasks/Sources/Tasks")
        for file in sources { try FileManager.default.removeItem(atPath: workspace.root + "/tasks/Sources/Tasks/" + file) }
        try Self.source.write(toFile: workspace.root + "/tasks/Sources/Tasks/Tasks.swift", atomically: true, encoding: .utf8)
        let (status, log) = try ToolProcess.run("/usr/bin/env", ["swift", "build", "--package-path", "tasks"], in: workspace.root)
        try #require(status == 0, "swift build failed:\n\(log)")

        let packed = try BerthProcess.run(["pack", "tasks", "--out", "plugins"], in: workspace.root)
        try #require(packed.status == 0, "\(packed.standardError)")
        #expect(!packed.standardError.contains("warning"), "\(packed.standardError)")
        let data = try #require(FileManager.default.contents(atPath: workspace.root + "/plugins/com.nu.tasks/plugin.json"))
        let manifest = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
        #expect(manifest["persist"] as? [String] == ["notes", "starred", "tasks"], "\(manifest)")

        // In a host: add a task (a [String] persisted as it is), open the notes, type in them.
        let script = ["open com.nu.tasks/tasks", "screen", "tap 1", "tap 2", "screen", "type 3 buy milk", "state"].joined(separator: "\n")
        let run = try BerthProcess.run(["run", "--plugins", "plugins", "--state-dir", "state", "--script", "-"], in: workspace.root, input: script)
        #expect(run.status == 0, "\(run.standardOutput)\(run.standardError)")
        #expect(!run.standardError.contains("not saved") && !run.standardOutput.contains("not saved"), "\(run.standardOutput)\(run.standardError)")
        #expect(run.standardOutput.contains("com.nu.tasks/tasks  = [\"task 1\"] (JSON)"), "\(run.standardOutput)")
        #expect(run.standardOutput.contains("com.nu.tasks/notes  = \"buy milk\" (String)"), "\(run.standardOutput)")

        // A manifest that grants no state.persist: the warning names Swift's spelling.
        try #"{"capabilities": []}"#.write(toFile: workspace.root + "/tasks/plugin.json", atomically: true, encoding: .utf8)
        let ungranted = try BerthProcess.run(["pack", "tasks", "--out", "plugins"], in: workspace.root)
        #expect(ungranted.status == 0, "\(ungranted.standardError)")
        #expect(ungranted.standardError.contains(
            "warning: com.nu.tasks: it persists 'notes', 'starred', 'tasks' but its capabilities lack .statePersist (add it to Plugin(capabilities:)"),
            "\(ungranted.standardError)")
        // Its refused read is an event and a log line, not an empty list passed off as the data:
        // once per key, however many renders read it.
        let refused = try BerthProcess.run(["run", "--plugins", "plugins", "--state-dir", "state", "--script", "-"], in: workspace.root,
                                           input: "open com.nu.tasks/tasks\nscreen\ntap 1\nscreen\n")
        let said = refused.standardOutput + refused.standardError
        let event = "com.nu.tasks: persist_read tasks refused: no capability .statePersist"
        let refusalLog = "@Persisted(\"tasks\") not read, showing its default: persist_read: com.nu.tasks lacks the capability .statePersist"
        #expect(said.components(separatedBy: event).count - 1 == 1, "\(said)")
        #expect(said.components(separatedBy: refusalLog).count - 1 == 1, "\(said)")

        // A hand-written persist list that misses keys the code states: a line each, pack fails.
        try #"{"persist": ["tasks"]}"#.write(toFile: workspace.root + "/tasks/plugin.json", atomically: true, encoding: .utf8)
        let stale = try BerthProcess.run(["pack", "tasks", "--out", "plugins"], in: workspace.root)
        #expect(stale.status != 0)
        let errors = stale.standardError.split(separator: "\n").filter { $0.hasPrefix("error:") }
        #expect(errors.count == 2, "\(stale.standardError)")
        #expect(errors.first?.contains("persist: libTasks.so (berth_describe_v1) uses the persisted key 'notes', plugin.json's persist does not declare it") == true,
                "\(stale.standardError)")
    }

    @Test("validate warns a C plugin whose persist keys its capabilities do not reach, in the manifest's spelling")
    func validateWarnsInManifestSpelling() throws {
        let workspace = PluginWorkspace()
        let folder = workspace.stageProbe { $0["capabilities"] = ["navigate"] }
        let output = try BerthProcess.run(["validate", "--static", folder], in: workspace.root)
        #expect(output.status == 0, "a warning does not fail validation: \(output.standardOutput)\(output.standardError)")
        #expect((output.standardOutput + output.standardError).contains(
            "warning: org.berth.probe: it persists 'note' but its capabilities lack 'state.persist' (declare it in plugin.json \"capabilities\")"),
            "\(output.standardOutput)\(output.standardError)")
        let granted = workspace.stageProbe { $0["capabilities"] = ["state.persist"] }
        let quiet = try BerthProcess.run(["validate", "--static", granted], in: workspace.root)
        #expect(!(quiet.standardOutput + quiet.standardError).contains("capabilities lack"), "\(quiet.standardOutput)")
    }

    @Test("the source scan reads only the library's own target when the package has several, and skips comments and computed keys")
    func sourceScanPerTarget() throws {
        let workspace = PluginWorkspace()
        let sources = workspace.root + "/pkg/Sources"
        for (target, text) in [("Tasks", #"@Persisted("tasks") var t: [Int] = [] // @Persisted("commented")"# + "\n" + #"@Persisted("row-\(id)") var r = 0"#),
                               ("Tags", #"@Persisted(wrappedValue: "none", "last-tag") var tag: String"#)] {
            try FileManager.default.createDirectory(atPath: sources + "/" + target, withIntermediateDirectories: true)
            try text.write(toFile: sources + "/" + target + "/" + target + ".swift", atomically: true, encoding: .utf8)
        }
        #expect(SourceFacts.persistedKeys(inPackage: workspace.root + "/pkg", library: "/x/.build/debug/libTasks.so") == ["tasks"])
        #expect(SourceFacts.persistedKeys(inPackage: workspace.root + "/pkg", library: "libTags.so") == ["last-tag"])
        #expect(SourceFacts.persistedKeys(inPackage: workspace.root + "/pkg", library: "libOther.so") == ["last-tag", "tasks"])
        let uses = #"try context.run("tick") { _ in }; _ = try context.push("com.example.tags/pick"); _ = try context.push("com.nu.tasks/own")"#
            + "\n" + #"// context.terminate(x) in a comment"#
        try uses.write(toFile: sources + "/Tasks/Uses.swift", atomically: true, encoding: .utf8)
        let found = SourceFacts.usedCapabilities(inPackage: workspace.root + "/pkg", library: "libTasks.so", pluginID: "com.nu.tasks")
        #expect(found.map(\.capability) == [.navigateAny, .tasks], "\(found)")
        #expect(found.first?.use == "opens com.example.tags/pick")
    }
}
