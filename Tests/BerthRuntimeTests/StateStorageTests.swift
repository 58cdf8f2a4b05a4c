import Foundation
import Testing
@_spi(Engine) @testable import BerthRuntime
import BerthTestSupport

/// Host-only: the storage and identity rules without any plugin.
@Suite("State storage (host)") @MainActor
struct StateStorageUnitTests {
    @Test("the same key gives the same storage")
    func sameKey() {
        let storage = StateStorage()
        storage.write(identity: "A/VStack.0/Row", index: 0, fingerprint: 7, bytes: [1])
        #expect(storage.read(identity: "A/VStack.0/Row", index: 0, fingerprint: 7) == [1])
        storage.write(identity: "A/VStack.0/Row", index: 0, fingerprint: 7, bytes: [2])
        #expect(storage.read(identity: "A/VStack.0/Row", index: 0, fingerprint: 7) == [2])
        #expect(storage.slots.count == 1)
    }

    @Test("different keys give different storage: identity or index")
    func differentKeys() {
        let storage = StateStorage()
        storage.write(identity: "A", index: 0, fingerprint: 7, bytes: [1])
        storage.write(identity: "A", index: 1, fingerprint: 7, bytes: [2])
        storage.write(identity: "B", index: 0, fingerprint: 7, bytes: [3])
        #expect(storage.read(identity: "A", index: 0, fingerprint: 7) == [1])
        #expect(storage.read(identity: "A", index: 1, fingerprint: 7) == [2])
        #expect(storage.read(identity: "B", index: 0, fingerprint: 7) == [3])
    }

    @Test("a slot of another type reads as empty")
    func fingerprintMismatch() {
        let storage = StateStorage()
        storage.write(identity: "A", index: 0, fingerprint: 7, bytes: [1])
        #expect(storage.read(identity: "A", index: 0, fingerprint: 8) == nil)
    }

    @Test("render-pass GC drops slots not read or written during the pass")
    func renderPassGC() {
        let storage = StateStorage()
        storage.write(identity: "kept", index: 0, fingerprint: 1, bytes: [1])
        storage.write(identity: "gone", index: 0, fingerprint: 1, bytes: [2])
        storage.beginRenderPass()
        _ = storage.read(identity: "kept", index: 0, fingerprint: 1)
        storage.write(identity: "new", index: 0, fingerprint: 1, bytes: [3])
        let dropped = storage.endRenderPass()
        #expect(dropped.map(\.identity) == ["gone"])
        #expect(Set(storage.slots.keys.map(\.identity)) == ["kept", "new"])
    }

    @Test("invalidating a branch drops it and everything below, nothing beside it")
    func branchInvalidation() {
        let storage = StateStorage()
        for identity in ["S/VStack.2/if#true.0/Details", "S/VStack.2/if#true.0/Details/VStack.0/Note", "S/VStack.2/if#false.0/Other", "S/VStack.20/Row"] {
            storage.write(identity: identity, index: 0, fingerprint: 1, bytes: [1])
        }
        #expect(storage.invalidateDescendants(of: "S/VStack.2/if#true") == 2)
        #expect(Set(storage.slots.keys.map(\.identity)) == ["S/VStack.2/if#false.0/Other", "S/VStack.20/Row"])
    }

    @Test("a view is not its own ancestor; descendants across slots and branches are")
    func ancestorDetection() {
        let screen = ViewIdentity(pluginID: "com.a.b", instance: 1, path: "S/VStack")
        let child = ViewIdentity(pluginID: "com.a.b", instance: 1, path: "S/VStack.1/Stepper")
        let branch = ViewIdentity(pluginID: "com.a.b", instance: 1, path: "S/VStack#true")
        let sibling = ViewIdentity(pluginID: "com.a.b", instance: 1, path: "S/VStackX")
        let otherInstance = ViewIdentity(pluginID: "com.a.b", instance: 2, path: "S/VStack.1/Stepper")
        #expect(!screen.isAncestor(of: screen))
        #expect(screen.isAncestor(of: child))
        #expect(screen.isAncestor(of: branch))
        #expect(!screen.isAncestor(of: sibling))
        #expect(!screen.isAncestor(of: otherInstance))
        #expect(!child.isAncestor(of: screen))
        #expect(child.description == "com.a.b#1/S/VStack.1/Stepper")
    }
}

/// Views and state of real plugins, rendered through the ABI.
@Suite("State storage with real plugins") @MainActor
struct StatePluginTests {
    private func find(_ tree: ViewTree?, _ type: String, label: String? = nil) throws -> ViewNode {
        try #require(tree?.allNodes.first { $0.type == type && (label == nil || $0.fields["label"] == label) })
    }

    @Test("state survives re-rendering, though the plugin rebuilds its views every pass")
    func survivesRerender() async throws {
        let plugins = try await ExamplePlugins()
        let counter = try plugins.host.push("counter")
        let stepper = try find(try plugins.host.render(), "Stepper").id
        try plugins.host.inputBlocking(.step(.up), view: stepper)
        try plugins.host.inputBlocking(.step(.up), view: stepper)
        for _ in 0..<5 { try plugins.host.render() }
        #expect(try find(try plugins.host.render(), "Stepper").fields["value"] == "2")
        #expect(counter.module?.stateStorage.slots.count == 1, "only the stepper's slot was written")
    }

    @Test("self-hydration: a value in the host's storage is what the view shows")
    func selfHydration() async throws {
        let plugins = try await ExamplePlugins()
        let counter = try plugins.host.push("counter")
        try plugins.host.inputBlocking(.step(.up), view: try find(try plugins.host.render(), "Stepper").id)
        let storage = try #require(counter.module?.stateStorage)
        let key = try #require(storage.slots.first { $0.value.bytes.count == 8 }?.key)
        let fingerprint = try #require(storage.slots[key]?.fingerprint)
        storage.write(identity: key.identity, index: key.index, fingerprint: fingerprint, bytes: withUnsafeBytes(of: Int64(42).littleEndian, Array.init))
        #expect(try find(try plugins.host.render(), "Stepper").fields["value"] == "42")
    }

    @Test("several @State of one view get distinct indices under that view's own identity")
    func distinctIndices() async throws {
        let plugins = try await ExamplePlugins()
        let counter = try plugins.host.push("counter")
        let tree = try plugins.host.render()
        try plugins.host.inputBlocking(.step(.up), view: try find(tree, "Stepper").id)
        try plugins.host.inputBlocking(.toggle, view: try find(tree, "Toggle").id)
        let keys = try #require(counter.module?.stateStorage.slots.keys).filter { $0.identity == "CounterScreen/VStack.1/CounterPanel" }
        #expect(keys.map(\.index).sorted() == [0, 1])
    }

    @Test("child identity paths follow containers and slots; branches are #true/#false")
    func identityPaths() async throws {
        let plugins = try await ExamplePlugins()
        _ = try plugins.host.push("counter")
        let tree = try plugins.host.render()
        #expect(try find(tree, "Stepper").id == "CounterScreen/VStack.1/CounterPanel/VStack.0/Stepper")
        #expect(try find(tree, "if").id == "CounterScreen/VStack.1/CounterPanel/VStack.4/if")
        #expect(try find(tree, "Text", label: nil).id == "CounterScreen/VStack.0/Text")
        let hidden = try #require(tree?.allNodes.first { $0.fields["text"] == "(details hidden)" })
        #expect(hidden.id == "CounterScreen/VStack.1/CounterPanel/VStack.4/if#false.0/Text")
        try plugins.host.inputBlocking(.toggle, view: try find(tree, "Toggle").id)
        let opened = try plugins.host.render()
        #expect(try find(opened, "TextField").id == "CounterScreen/VStack.1/CounterPanel/VStack.4/if#true.0/Details/VStack.0/NoteField/TextField")
    }

    @Test("a branch switch drops the old branch's state at once; switching back starts fresh")
    func branchSwitchInvalidates() async throws {
        let plugins = try await ExamplePlugins()
        let counter = try plugins.host.push("counter")
        let toggle = try find(try plugins.host.render(), "Toggle").id
        let opened = try plugins.host.inputBlocking(.toggle, view: toggle)
        try plugins.host.inputBlocking(.type("remember me"), view: try find(opened, "TextField").id)
        let storage = try #require(counter.module?.stateStorage)
        #expect(storage.slots.keys.contains { $0.identity.contains("if#true") })
        try plugins.host.inputBlocking(.toggle, view: toggle)
        #expect(!storage.slots.keys.contains { $0.identity.contains("if#true") })
        let reopened = try plugins.host.inputBlocking(.toggle, view: toggle)
        #expect(try find(reopened, "TextField").fields["text"] == "")
    }

    @Test("render-pass GC: state of a view that is no longer rendered is dropped")
    func gcDropsUnrendered() async throws {
        let plugins = try await ExamplePlugins()
        let counter = try plugins.host.push("counter")
        let storage = try #require(counter.module?.stateStorage)
        storage.write(identity: "CounterScreen/VStack.9/Gone", index: 0, fingerprint: 1, bytes: [1])
        try plugins.host.render()
        #expect(!storage.slots.keys.contains { $0.identity.hasSuffix("Gone") })
    }

    @Test("nested views keep independent state; ForEach rows keep theirs across a reorder")
    func nestedAndRows() async throws {
        let plugins = try await ExamplePlugins()
        let inbox = try plugins.host.push("inbox")
        let tree = try plugins.host.render()
        let stars = tree?.allNodes.filter { $0.type == "Toggle" } ?? []
        #expect(stars.count == 2)
        try plugins.host.inputBlocking(.toggle, view: stars[0].id)
        try plugins.host.inputBlocking(.tap, view: try find(tree, "Button").id)
        try plugins.host.sendBlocking(screen: inbox.id, action: "rotate", payload: [])
        let rotated = try plugins.host.render()
        let rows = rotated?.allNodes.filter { $0.type == "HStack" && $0.id.contains("/ForEach.") } ?? []
        #expect(rows.map { $0.children[1].fields["text"] } == ["Try tap, toggle, type and step", "Welcome to Berth"])
        #expect(rows.map { $0.children[0].fields["isOn"] } == ["false", "true"], "the star followed its row")
        #expect(try find(rotated, "Button").fields["label"] == "unread: 1")
    }

    @Test("two plugins with a same-named view keep separate state")
    func samenamedViewsAcrossPlugins() async throws {
        let plugins = try await ExamplePlugins()
        _ = try plugins.host.push("counter")
        let counterBadge = try find(try plugins.host.render(), "Button", label: "taps: 0").id
        try plugins.host.inputBlocking(.tap, view: counterBadge)
        try plugins.host.inputBlocking(.tap, view: counterBadge)
        let inbox = try plugins.host.push("inbox")
        let inboxBadge = try find(try plugins.host.render(), "Button")
        #expect(inboxBadge.fields["label"] == "unread: 0")
        try plugins.host.inputBlocking(.tap, view: inboxBadge.id)
        #expect(try find(try plugins.host.render(), "Button").fields["label"] == "unread: 1")
        plugins.host.close(inbox)
        #expect(try find(try plugins.host.render(), "Button", label: "taps: 2").type == "Button")
    }

    @Test("two instances of one screen keep separate state")
    func twoInstances() async throws {
        let plugins = try await ExamplePlugins()
        let first = try plugins.host.push("counter")
        try plugins.host.inputBlocking(.step(.up), view: try find(try plugins.host.render(), "Stepper").id)
        let second = try plugins.host.push("counter")
        #expect(try find(try plugins.host.render(), "Stepper").fields["value"] == "0")
        #expect(try find(try plugins.host.render(screen: first.id), "Stepper").fields["value"] == "1")
        #expect(first.id != second.id)
    }

    @Test("reopen starts from defaults: releasing the instance dropped its state")
    func reopenStartsFresh() async throws {
        let plugins = try await ExamplePlugins()
        let counter = try plugins.host.push("counter")
        try plugins.host.inputBlocking(.step(.up), view: try find(try plugins.host.render(), "Stepper").id)
        plugins.host.close(counter)
        _ = try plugins.host.push("counter")
        #expect(try find(try plugins.host.render(), "Stepper").fields["value"] == "0")
    }

    @Test("@State created outside a render is a plain local box: nothing reaches the host")
    func localBoxOutsideRender() async throws {
        let plugins = try await ExamplePlugins()
        let inbox = try plugins.host.push("inbox")
        try plugins.host.sendBlocking(screen: inbox.id, action: "compose", payload: [])
        let compose = try #require(plugins.host.visibleRouter)
        try plugins.host.sendBlocking(screen: compose.id, action: "type", payload: Array("kept locally".utf8))
        #expect(compose.module?.stateStorage.slots.isEmpty == true)
        try plugins.host.sendBlocking(screen: compose.id, action: "send", payload: [])
        #expect(plugins.recorder.matching("inbox received 'kept locally'").count == 1)
    }

    @Test("reload resets @State by default; --keep-state keeps it and resets only a slot whose type changed")
    func keepState() async throws {
        let plugins = try await ExamplePlugins()
        let counter = try plugins.host.push("counter")
        let tree = try plugins.host.render()
        try plugins.host.inputBlocking(.step(.up), view: try find(tree, "Stepper").id)
        try plugins.host.inputBlocking(.toggle, view: try find(tree, "Toggle").id)
        try plugins.host.reload("com.example.counter")
        #expect(try find(try plugins.host.render(), "Stepper").fields["value"] == "0")
        #expect(try find(try plugins.host.render(), "Toggle").fields["isOn"] == "false")

        try plugins.host.inputBlocking(.step(.up), view: try find(try plugins.host.render(), "Stepper").id)
        try plugins.host.inputBlocking(.toggle, view: try find(try plugins.host.render(), "Toggle").id)
        // Simulate a new build whose Details toggle is another type: rewrite that slot's fingerprint.
        let storage = try #require(counter.module?.stateStorage)
        let toggleKey = try #require(storage.slots.first { $0.value.bytes.count == 1 }?.key)
        storage.write(identity: toggleKey.identity, index: toggleKey.index, fingerprint: 0xBAD, bytes: [1])
        try plugins.host.reload("com.example.counter", keepState: true)
        let kept = try plugins.host.render()
        #expect(try find(kept, "Stepper").fields["value"] == "1", "matching slot kept")
        #expect(try find(kept, "Toggle").fields["isOn"] == "false", "the slot whose type changed starts from its default")
    }

    @Test("reload --keep-state hands each screen's save_state bytes to its new instance; a plain reload does not")
    func keepStateCarriesSavedBytes() async throws {
        let plugins = try await ExamplePlugins()
        // A tick interval of an hour keeps the tick count at 0 for the whole test.
        let counter = try plugins.host.push("counter", argument: Array("3600000".utf8))
        for _ in 0..<2 { try plugins.host.sendBlocking(screen: counter.id, action: "increment", payload: []) }

        try plugins.host.reload("com.example.counter", keepState: true)
        plugins.recorder.clear()
        try plugins.host.sendBlocking(screen: counter.id, action: "report", payload: [])
        #expect(plugins.recorder.matching("count 2, ticks 0").count == 1, "\(plugins.recorder.all)")

        try plugins.host.reload("com.example.counter")
        plugins.recorder.clear()
        try plugins.host.sendBlocking(screen: counter.id, action: "report", payload: [])
        #expect(plugins.recorder.matching("count 0, ticks 0").count == 1, "\(plugins.recorder.all)")
    }
}

@Suite("Persisted state") @MainActor
struct PersistedStateTests {
    private func host(_ workspace: PluginWorkspace, stateDirectory: String, recorder: LogRecorder) throws -> BerthHost {
        let host = try BerthHost(configuration: .init(pluginFolders: [workspace.plugins], runtimeBase: workspace.runtimeBase,
                                                      stateDirectory: stateDirectory, logger: recorder.logger()))
        host.discover()
        try host.load("com.example.counter")
        return host
    }

    private func total(_ host: BerthHost, _ recorder: LogRecorder) throws -> String {
        recorder.clear()
        try host.sendBlocking(screen: try #require(host.visibleRouter).id, action: "report", payload: [])
        return String(try #require(recorder.all.last).split(separator: " ").last ?? "")
    }

    private func addToTotal(_ host: BerthHost, steps: Int) throws {
        let tree = try host.render()
        let stepper = try #require(tree?.allNodes.first { $0.type == "Stepper" }).id
        for _ in 0..<steps { try host.inputBlocking(.step(.up), view: stepper) }
        try host.inputBlocking(.tap, view: try #require(tree?.allNodes.first { $0.fields["label"] == "Add to total" }).id)
    }

    @Test("a persisted value survives reopen and reload")
    func reopenAndReload() throws {
        let workspace = PluginWorkspace()
        workspace.stage("counter.json")
        let recorder = LogRecorder()
        let host = try host(workspace, stateDirectory: workspace.root + "/state", recorder: recorder)
        let counter = try host.push("counter")
        try addToTotal(host, steps: 4)
        #expect(try total(host, recorder) == "4")
        host.close(counter)
        _ = try host.push("counter")
        #expect(try total(host, recorder) == "4", "reopen")
        try host.reload("com.example.counter")
        #expect(try total(host, recorder) == "4", "reload")
    }

    @Test("a persisted value survives a real host restart (two processes)")
    func processRestart() throws {
        let workspace = PluginWorkspace()
        workspace.stage("counter.json")
        let script = "load com.example.counter\nopen counter\nscreen\nstep 1 +\nstep 1 +\ntap 2\nsend report\n"
        let first = try BerthProcess.run(["run", "--plugins", "plugins", "--state-dir", "state", "--script", "-"], in: workspace.root, input: script)
        #expect(first.status == 0, "\(first.standardError)")
        #expect(first.standardError.contains("total 2"))
        // Ticks an hour apart: "ticks 0" must not depend on how soon the report follows the open.
        let second = try BerthProcess.run(["run", "--plugins", "plugins", "--state-dir", "state", "--script", "-"], in: workspace.root, input: "load com.example.counter\nopen counter 3600000\nsend report\n")
        #expect(second.standardError.contains("count 0, ticks 0, total 2"), "\(second.standardError)")
    }

    @Test("a key missing from the manifest's persist list is refused with the plugin named")
    func undeclaredKey() throws {
        let workspace = PluginWorkspace()
        workspace.stage("counter.json") { $0["persist"] = [] }
        let recorder = LogRecorder()
        let host = try host(workspace, stateDirectory: workspace.root + "/state", recorder: recorder)
        _ = try host.push("counter")
        try addToTotal(host, steps: 1)
        #expect(recorder.matching("@Persisted(\"total\") not saved: persist_write: key 'total' is not in com.example.counter's manifest persist list").count == 1)
    }

    @Test("a host opening a state folder whose database another process is writing waits for that write, and persistence is on")
    func sharedStateFolder() throws {
        let workspace = PluginWorkspace()
        workspace.stage("counter.json")
        let folder = workspace.root + "/state"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        // Another process (a second host, here SQLite itself) holds the write lock for a second.
        let writer = Process()
        writer.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        writer.arguments = ["-c", """
            import sqlite3, sys, time
            c = sqlite3.connect(sys.argv[1], isolation_level=None)
            c.execute('PRAGMA journal_mode=wal'); c.execute('BEGIN IMMEDIATE')
            print('locked', flush=True); time.sleep(1); c.execute('COMMIT')
            """, folder + "/berth-state.sqlite"]
        let output = Pipe()
        writer.standardOutput = output
        try writer.run()
        defer { writer.waitUntilExit() }
        let said = String(decoding: output.fileHandleForReading.availableData, as: UTF8.self)
        try #require(said.contains("locked"), "the other writer holds the lock: \(said)")
        let recorder = LogRecorder()
        let host = try host(workspace, stateDirectory: folder, recorder: recorder)
        guard case .on = host.persistenceStatus else {
            Issue.record("persistence should be on, is \(host.persistenceStatus)")
            return
        }
        _ = try host.push("counter")
        try addToTotal(host, steps: 2)
        #expect(recorder.matching("not saved").isEmpty, "\(recorder.all)")
    }

    @Test("an unreadable database is reported, persistence is off, and the file is not overwritten")
    func unreadableDatabase() throws {
        let workspace = PluginWorkspace()
        workspace.stage("counter.json")
        let folder = workspace.root + "/state"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let garbage = Data(repeating: 0x5A, count: 4096)
        let file = folder + "/berth-state.sqlite"
        try #require(FileManager.default.createFile(atPath: file, contents: garbage))
        let recorder = LogRecorder()
        let host = try host(workspace, stateDirectory: folder, recorder: recorder)
        guard case .failed(let path, _) = host.persistenceStatus else {
            Issue.record("persistence should be off, is \(host.persistenceStatus)")
            return
        }
        #expect(path.hasSuffix("berth-state.sqlite"))
        _ = try host.push("counter")
        try addToTotal(host, steps: 2)
        #expect(recorder.matching("@Persisted(\"total\") not saved").count == 1)
        #expect(recorder.matching("persistence is off").count == 1)
        #expect(try total(host, recorder) == "0", "the write was refused, not pretended")
        #expect(FileManager.default.contents(atPath: file) == garbage)
        let cli = try BerthProcess.run(["run", "--plugins", "plugins", "--state-dir", "state", "--script", "-"], in: workspace.root, input: "plugins\n")
        #expect(cli.standardError.contains("error: persistence is OFF, nothing will be saved:"))
        #expect(cli.status == 0, "the host runs on")
    }
}

@Suite("A large render") @MainActor
struct LargeRenderTests {
    @Test("10,000 stateful rows render; the pass keeps exactly the slots of rows still shown")
    func tenThousandRows() throws {
        let workspace = PluginWorkspace()
        workspace.stage("stress.json")
        let host = try workspace.makeHost()
        try host.load("org.berth.stress")
        let grid = try host.push("org.berth.stress/grid", argument: Array("10000".utf8))
        let tree = try #require(try host.render())
        let buttons = tree.allNodes.filter { $0.type == "Button" }
        #expect(buttons.count == 10_000)
        #expect(buttons[9_999].id == "GridScreen/List.0/ForEach.9999.0/Cell/Button")
        for row in [0, 4_999, 9_999] { try host.inputBlocking(.tap, view: buttons[row].id) }
        let storage = try #require(grid.module?.stateStorage)
        #expect(storage.slots.count == 3)
        #expect(try host.render()?.allNodes.first { $0.id == buttons[4_999].id }?.fields["label"] == "row 4999: 1")
    }
}
