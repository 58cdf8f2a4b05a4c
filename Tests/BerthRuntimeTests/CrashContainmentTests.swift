import Foundation
import Testing
@_spi(Engine) @testable import BerthRuntime
import BerthTestSupport

/// Isolated plugins that crash or hang: real worker processes running the crasher fixture,
/// beside a Greeter screen in the host's process that must not notice.
@Suite("Crash containment (isolated plugins)") @MainActor
struct CrashContainmentTests {
    /// How the crasher fails, and how the host must name it.
    nonisolated static let failures: [(how: String, reason: String)] = [
        ("segv", "SIGSEGV"), ("abort", "SIGABRT"), ("trap", "SIGILL"), ("exit", "exited with status 3"),
        ("stack", "SIGSEGV"), ("hang", "unresponsive"),
    ]
    nonisolated static let moments = ["create", "activate", "action", "render", "event", "task"]

    @MainActor
    struct Setup {
        let workspace = PluginWorkspace()
        let host: BerthHost
        let hello: Router

        /// Loads as long main-actor work: each load starts a worker (the crasher's, or
        /// Greeter's trial load).
        init(crashLimit: Int = 3) async throws {
            workspace.stage("greeter.json")
            workspace.stageCrasher(isolation: "process")
            // A budget no healthy call on a loaded machine comes near (a crash is seen when the
            // worker's end of the channel closes); a hang case shortens it just before the step
            // that hangs (`shortenHangBudget`).
            var settings = TestIsolation.settings(.manifest(default: .inProcess), unresponsive: .seconds(300))
            settings.crashLimit = crashLimit
            var work = await LongMainActorWork.begin()
            defer { work.end() }
            host = try workspace.makeHost(isolation: settings)
            try host.load("com.example.greeter")
            await work.pause()
            try host.load("org.berth.crasher")
            await work.pause()
            hello = try host.push("hello")
        }

        /// The crasher's worker is judged hung after 3 s of silence from now on (the product's
        /// default budget), for the step that must hang.
        func shortenHangBudget() throws {
            try host.shortenHangBudget(of: "org.berth.crasher")
        }

        /// Waits (serving the main actor) until the crasher has crashed `count` times.
        func waitForCrashes(_ count: Int) async throws {
            await eventuallyAsync { host.events.filter { $0.kind == .crashed }.count >= count }
        }
    }

    @Test("a worker that fails in each way at each moment leaves the host, and the other plugin's screen, running",
          arguments: failures.map(\.how), moments)
    func contained(how: String, when: String) async throws {
        let setup = try await Setup()
        let host = setup.host
        let reason = try #require(Self.failures.first { $0.how == how }?.reason)
        // The worker is not PID 1 of its own PID namespace (its init is), so even abort()'s
        // SIGABRT ends it; the process the host spawned ends the same way.
        let generation = try #require(host.generation(of: "org.berth.crasher"))
        // Looked for again until seen: the kernel's list of a process's children
        // (`/proc/PID/task/TID/children`) may miss one while processes start and end around it.
        #expect(await eventuallyAsync { generation.workerPluginPID != generation.workerPID }, "the crasher's worker has no PID namespace of its own")
        // A screen whose plugin fails in an action, or whose task hangs, opens first: its push
        // must succeed (a check skipped because the push failed would pass by luck). One that
        // fails while it is made cannot open; a task that crashes may take the worker down
        // before or after the push returns.
        let opened: Router?
        // A hang while the screen is made or shown hangs the push itself.
        if how == "hang", !["action", "task"].contains(when) { try setup.shortenHangBudget() }
        switch when {
        case "action":
            opened = try host.push(Route(name: "\(how)-\(when)"))
        case "task" where how == "hang":
            opened = try host.push(Route(name: "\(how)-\(when)"))
        case "create", "activate":
            #expect(throws: (any Error).self) { try host.push(Route(name: "\(how)-\(when)")) }
            opened = nil
        default:
            opened = try? host.push(Route(name: "\(how)-\(when)"))
        }
        if when == "action" {
            let screen = try #require(opened).id
            if how == "hang" { try setup.shortenHangBudget() }
            #expect(throws: ScreenError.self) { try host.sendBlocking(screen: screen, action: "poke", payload: []) }
        }
        // A task that hangs keeps the worker answering until deactivation awaits it.
        if how == "hang", when == "task" {
            try setup.shortenHangBudget()
            host.close(try #require(opened))
        }
        try await setup.waitForCrashes(1)
        let crashed = host.events.filter { $0.kind == .crashed }
        #expect(crashed.count == 1, "\(host.events.suffix(10).map(\.description))")
        #expect(crashed.first?.subject == .plugin("org.berth.crasher"))
        #expect(crashed.first?.message.contains("(\(reason))") == true, "\(crashed.first?.message ?? "no crash event")")
        #expect(crashed.first?.message.contains("Fatal error: crasher fails by \(how)") == true)
        // Every crasher screen is closed; the Greeter screen is still there and answers.
        #expect(!host.openRouters.contains { $0.pluginID == "org.berth.crasher" })
        #expect(setup.hello.module?.isActive == true)
        #expect(host.openRouters.count == 1)
        try host.sendBlocking(screen: setup.hello.id, action: "wave", payload: [])
        #expect(host.plugins["org.berth.crasher"]?.state == .crashed)
        if let opened, when != "create" {
            // A screen that had appeared was removed permanently, by the usual close sequence.
            let events = host.events.filter { $0.subject == .screen(opened.id) }.map(\.message)
            #expect(events.contains("released (org.berth.crasher/\(how)-\(when))"), "\(events)")
        }
    }

    @Test("a crashed plugin starts again on its next use; after 3 crashes it is failed until loaded again")
    func budget() async throws {
        let setup = try await Setup()
        let host = setup.host
        for crash in 1...3 {
            _ = try? host.push("segv-activate")
            try await setup.waitForCrashes(crash)
        }
        #expect(host.plugins["org.berth.crasher"]?.state == .failed(CrashBudgetSpent(crashes: 3, window: .seconds(300))))
        #expect { try host.push("ok") } throws: { error in
            (error as? ScreenError)?.message.contains("failed: crashed 3 times") == true
        }
        try host.load("org.berth.crasher")
        let ok = try host.push("ok")
        #expect(ok.module?.isActive == true)
        #expect(try host.generation(of: "org.berth.crasher")?.call("crasher_add", arguments: [.int32(2), .int32(40)]) == .int32(42))
    }

    @Test("an export that crashes the worker fails the call with the signal, and the plugin starts again")
    func exportCrash() async throws {
        let setup = try await Setup()
        let host = setup.host
        let generation = try #require(host.generation(of: "org.berth.crasher"))
        #expect { try generation.call("crasher_segv", arguments: []) } throws: { error in
            (error as? FFIError)?.message.contains("SIGSEGV") == true
        }
        try await setup.waitForCrashes(1)
        let again = try #require(try host.generationForUse(of: "org.berth.crasher"))
        #expect(again.number == 2)
        #expect(try again.call("crasher_add", arguments: [.int32(1), .int32(2)]) == .int32(3))
    }

    @Test("reloading an isolated plugin starts a new worker and retires nothing")
    func reloadRetiresNothing() async throws {
        let setup = try await Setup()
        let host = setup.host
        let first = try #require(host.generation(of: "org.berth.crasher")?.workerPID)
        _ = try host.push("ok")
        var work = await LongMainActorWork.begin()
        defer { work.end() }
        for _ in 0..<20 {
            await work.pause()
            try host.reload("org.berth.crasher")
        }
        let last = try #require(host.generation(of: "org.berth.crasher")?.workerPID)
        #expect(first != last)
        #expect(host.retiredGenerations == 0)
        // Each old worker ends on its lane after its unload returned (the host does not wait).
        #expect(await eventuallyAsync { kill(first, 0) != 0 }, "the first worker is gone")
        #expect(host.openRouters.filter { $0.pluginID == "org.berth.crasher" }.count == 1)
    }

    @Test("unloading a plugin whose worker no longer answers (stopped) returns at once; the worker is ended on its lane, and the host goes on")
    func unloadDoesNotWaitForItsWorker() async throws {
        let setup = try await Setup()
        let host = setup.host
        let worker = try #require(host.generation(of: "org.berth.crasher")?.workerPID)
        // The whole process group: the worker, and its init and plugin process when it has a PID namespace.
        #expect(kill(-worker, SIGSTOP) == 0)
        try host.unload("org.berth.crasher")
        // Returned with the worker still there, stopped: its unload (2 s), shutdown (1 s) and
        // exit (2 s) wait on its lane, which then kills it.
        #expect(kill(worker, 0) == 0, "the host waited for a worker that cannot answer")
        #expect(host.events.contains { $0.message == "generation 1 unloaded (its worker stops in the background)" })
        #expect(host.generation(of: "org.berth.crasher") == nil)
        #expect(setup.hello.module?.isActive == true)
        try host.sendBlocking(screen: setup.hello.id, action: "wave", payload: [])
        let ended = await eventuallyAsync { kill(worker, 0) != 0 }
        #expect(ended, "the lane ended and reaped the stopped worker")
        if !ended { kill(-worker, SIGKILL) }
        #expect(!host.events.contains { $0.kind == .crashed }, "an unload's timeouts are not a crash")
    }

    @Test("a worker killed from outside between calls, as the OOM killer kills (SIGKILL), is a crash of its plugin only")
    func killedFromOutside() async throws {
        let setup = try await Setup()
        let host = setup.host
        let opened = try host.push("ok")
        let worker = try #require(host.generation(of: "org.berth.crasher")?.workerPID)
        #expect(kill(worker, SIGKILL) == 0)
        // Nobody is calling the worker: the host notices by itself.
        try await setup.waitForCrashes(1)
        let crashed = host.events.filter { $0.kind == .crashed }
        #expect(crashed.first?.message.contains("(SIGKILL)") == true, "\(crashed.first?.message ?? "no crash event")")
        #expect(!host.openRouters.contains { $0.pluginID == "org.berth.crasher" })
        let events = host.events.filter { $0.subject == .screen(opened.id) }.map(\.message)
        #expect(events.contains("released (org.berth.crasher/ok)"), "\(events)")
        #expect(setup.hello.module?.isActive == true)
        try host.sendBlocking(screen: setup.hello.id, action: "wave", payload: [])
        // Its next use starts a new worker.
        #expect(try host.generationForUse(of: "org.berth.crasher")?.call("crasher_add", arguments: [.int32(1), .int32(1)]) == .int32(2))
    }
}
