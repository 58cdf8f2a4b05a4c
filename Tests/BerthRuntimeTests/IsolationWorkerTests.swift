import Foundation
import Testing
@_spi(Engine) @testable import BerthRuntime
import BerthWorker
import BerthTestSupport

/// The worker side of isolated plugins: a real `berth-worker` process on the real plugin
/// libraries, driven over its channel by a host written in the test (`RecordingHost`).
@Suite("Isolation worker", .blocking)
struct IsolationWorkerTests {
    // MARK: Hello and handshake

    @Test("hello loads the Swift Counter and reports its table")
    func helloCounter() throws {
        let (worker, reply) = try LaunchedWorker.launch("counter.json")
        guard case .hello(let handshake) = reply else { throw TestFailure("hello failed: \(reply)") }
        #expect(handshake.abi == ABIVersion(major: 1, minor: 2))
        #expect(handshake.tableSize == 120)
        #expect(handshake.pluginID == "com.example.counter")
        #expect(handshake.workerProcessID == worker.process.pid)
        #expect(handshake.functions.isSuperset(of: [.create, .destroy, .activate, .deactivate, .action, .renderTree, .saveState, .restoreState]))
        #expect(try worker.shutDown() == .exited(status: 0))
    }

    @Test("hello loads the C Greeter; its entry's service registration goes to the host, the declaration stays in the worker")
    func helloGreeter() throws {
        let (worker, reply) = try LaunchedWorker.launch("greeter.json")
        guard case .hello(let handshake) = reply else { throw TestFailure("hello failed: \(reply)") }
        #expect(handshake.pluginID == "com.example.greeter")
        #expect(handshake.functions.contains(.contextReceived))
        #expect(!handshake.functions.contains(.render))
        #expect(!handshake.functions.contains(.saveState))
        // Registered from the entry function, before the hello reply; nothing refused.
        let registered = worker.host.requests.compactMap { request, _ -> String? in
            if case .host(.serviceRegister(let key, let kind, _, _), _) = request, kind == 0 { return key }
            return nil
        }
        #expect(registered == ["com.example.greeter/Greeting"])
        #expect(!worker.host.logLines.contains { $0.contains("not registered") || $0.contains("refused") })
    }

    @Test("a library that fails the handshake or does not open is a loader error")
    func helloFailures() throws {
        let (wrongID, reply) = try LaunchedWorker.launch("counter.json") { $0.pluginID = "com.example.other" }
        guard case .helloFailed(let error) = reply else { throw TestFailure("expected a handshake failure, got \(reply)") }
        #expect(error.code == .handshakeFailed)
        #expect(error.message.contains("the library says it is 'com.example.counter'"))
        #expect(try wrongID.call(.render(instance: 1, slots: [])).status.code == 4, "nothing is served without a plugin")

        let (_, missing) = try LaunchedWorker.launch("counter.json") { $0.libraryPath = "/nonexistent/libCounter.so" }
        guard case .helloFailed(let open) = missing else { throw TestFailure("expected a dlopen failure, got \(missing)") }
        #expect(open.code == .dlopenFailed)
        #expect(open.message.contains("/nonexistent/libCounter.so"))
    }

    @Test("a worker that could not confine itself loads nothing more: a later hello is refused, not served unconfined")
    func failedConfinementRefusesLaterHellos() throws {
        let data = FileManager.default.temporaryDirectory.appendingPathComponent("berth-confine-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: data, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: data) }
        let library = BuildProducts.library("libGreeter.so")
        // No system-call filter: the worker refuses to finish confining itself.
        let policy = SandboxPolicy(readPaths: [ParentPath.of(library)], writePaths: [data], dataFolder: data, network: false)
        let (worker, first) = try LaunchedWorker.launch("greeter.json") { $0.sandbox = policy }
        guard case .helloFailed(let refused) = first else { throw TestFailure("expected a refused confinement, got \(first)") }
        #expect(refused.message.contains("the worker could not confine itself"), "\(refused.message)")
        let (manifest, problems) = PluginManifest.load(path: BuildProducts.manifest("greeter.json"))
        var unconfined = WorkerHello(manifest: try #require(manifest, "\(problems)"), libraryPath: library)
        unconfined.member = 2
        let second = try worker.channel.call(.hello(unconfined))
        guard case .helloFailed(let again) = second else { throw TestFailure("a second hello loaded its plugin after the sandbox failed: \(second)") }
        #expect(again.message.contains("the worker could not confine itself"), "\(again.message)")
    }

    @Test("a missing entry or export is a loader error with the symbol and the path as fields, as in process")
    func helloMissingSymbols() throws {
        let library = BuildProducts.library("libCounter.so")
        let (_, noEntry) = try LaunchedWorker.launch("counter.json") { $0.entry = "no_such_entry" }
        guard case .helloFailed(let entry) = noEntry else { throw TestFailure("expected a missing entry, got \(noEntry)") }
        #expect(entry.code == .symbolMissing && entry.symbol == "no_such_entry" && entry.path == library, "\(entry)")
        #expect(entry.message == "symbol 'no_such_entry' not found in \(library)")

        let (_, noExport) = try LaunchedWorker.launch("counter.json") {
            $0.exports = [ExportSignature(symbol: "no_such_export", params: [], returns: .int32)]
        }
        guard case .helloFailed(let export) = noExport else { throw TestFailure("expected a missing export, got \(noExport)") }
        #expect(export.code == .symbolMissing && export.symbol == "no_such_export" && export.path == library, "\(export)")
    }

    // MARK: Screens

    @Test("a Counter screen is created, activated, rendered, changed by an action, deactivated and destroyed")
    func counterLifecycle() throws {
        let (worker, _) = try LaunchedWorker.launch("counter.json")
        let token = try worker.open("counter", screen: 7, argument: "20")
        #expect(worker.host.notifications.contains { if case .taskStarted(7, "tick", _) = $0 { true } else { false } })

        let (first, tree) = try worker.render(token, screen: 7)
        #expect(first.status.isOK)
        #expect(tree?.texts.contains("Counter · ticks 0") == true, "\(tree?.texts ?? [])")

        #expect(try worker.call(.action(instance: token, name: "tick", payload: [])).status.isOK)
        let (_, changed) = try worker.render(token, screen: 7)
        #expect(changed?.texts.contains("Counter · ticks 1") == true, "\(changed?.texts ?? [])")

        // The ticking task posts while the host is idle; the host serves it from the socket.
        #expect(try worker.serve { host in host.notifications.contains { if case .taskPost(7, _, "tick", _) = $0 { true } else { false } } })

        #expect(try worker.call(.deactivate(instance: token)).status.isOK)
        // Cancelled and awaited before the reply: its finish was on the wire first.
        #expect(worker.host.notifications.contains { if case .taskFinished(7, "tick", _, true) = $0 { true } else { false } })
        let refused = try worker.call(.action(instance: token, name: "tick", payload: [])).status
        #expect(refused.code == 4 && refused.message.contains("not active"))

        #expect(try worker.call(.unload()).status.code == 4, "unload waits until every screen is destroyed")
        #expect(try worker.call(.destroy(instance: token)).status.isOK)
        #expect(try worker.call(.renderTree(instance: token, slots: [])).status.code == 2)
        #expect(try worker.call(.unload()).status.isOK)
        #expect(try worker.shutDown() == .exited(status: 0))
    }

    @Test("a render reads its state from the request's batch, with no state_read round trip")
    func renderFromBatch() throws {
        let (worker, _) = try LaunchedWorker.launch("counter.json")
        let token = try worker.open("counter", screen: 3, argument: "600000")
        let (first, tree) = try worker.render(token, screen: 3)
        #expect(first.status.isOK)
        #expect(worker.host.requests(named: "state_read").isEmpty, "the first render asks the host for nothing")
        guard let stepper = tree?.allNodes.first(where: { $0.type == "Stepper" }) else { throw TestFailure("no stepper rendered") }
        #expect(stepper.fields["value"] == "0")

        // Input outside a render: the write reaches the host as a one-way notification,
        // ordered before the action's reply (no round trip of its own).
        let step = ViewInput.step(.up).payload(view: stepper.id)
        #expect(try worker.call(.action(instance: token, name: ViewInput.step(.up).actionName, payload: step)).status.isOK)
        let writes = worker.host.notifications.filter { if case .stateWrite(3, _) = $0 { true } else { false } }
        #expect(writes.count == 1, "one state write, delivered before the action returned")

        let readsBefore = worker.host.requests(named: "state_read").count
        let (second, updated) = try worker.render(token, screen: 3)
        #expect(worker.host.requests(named: "state_read").count == readsBefore, "every read was served from the batch")
        #expect(updated?.allNodes.first { $0.type == "Stepper" }?.fields["value"] == "1")
        let written = try #require(worker.host.slots(of: 3).first)
        #expect(worker.lastUsed == [written.key], "the slot used is reported for the render-pass GC")
        #expect(second.writes.isEmpty)

        // The next step builds on the value the render had, with no state_read round trip.
        #expect(try worker.call(.action(instance: token, name: ViewInput.step(.up).actionName, payload: step)).status.isOK)
        #expect(worker.host.requests(named: "state_read").count == readsBefore, "the action asked the host for nothing")
        let (_, third) = try worker.render(token, screen: 3)
        #expect(third?.allNodes.first { $0.type == "Stepper" }?.fields["value"] == "2")
    }

    @Test("a navigate inside an action is answered on the same stack, calls nesting several levels deep")
    func reentrantNavigation() throws {
        let (worker, _) = try LaunchedWorker.launch("inbox.json")
        let inbox = try worker.open("inbox", screen: 1)
        let replies = Locked<[IsolationReply]>([])
        // The host answers the present by opening the compose screen in the same worker and
        // driving it while the inbox's action is still running.
        worker.host.answer = { request, channel in
            guard case .host(.navigate(2, "compose", _), 1) = request else { return nil }
            do {
                let created = try channel.call(.create(screen: 2, route: "compose", argument: []))
                guard case .created(_, let compose) = created else { return .navigated(created.status, screen: 0) }
                for request in [IsolationRequest.activate(instance: compose), .action(instance: compose, name: "type", payload: Array("hi".utf8)),
                                .action(instance: compose, name: "send", payload: [])] {
                    let reply = try channel.call(request)
                    replies.withLock { $0.append(reply) }
                }
            } catch {
                return .navigated(IsolationStatus(code: 5, message: "\(error)"), screen: 0)
            }
            return .navigated(.ok, screen: 2)
        }
        #expect(try worker.call(.action(instance: inbox, name: "compose", payload: [])).status.isOK)
        let nested = replies.withLock { $0 }
        #expect(nested.count == 3, "\(nested)")
        #expect(nested.allSatisfy { $0.status.isOK }, "\(nested)")
        let trace = worker.host.requests.map { ($0.request.name, $0.depth) }
        #expect(trace.map(\.0) == ["navigate", "send_delegate", "navigate", "observe_delegate"])
        #expect(trace.map(\.1) == [1, 2, 2, 1], "compose's calls arrive inside the host's nested call")
        #expect(worker.host.requests.contains { $0.request == .host(.sendDelegate(action: "sent", payload: Array("hi".utf8)), caller: 2) })
        #expect(worker.host.requests.contains { $0.request == .host(.observeDelegate(child: 2), caller: 1) })
    }

    @Test("a 10,000-row render carries its slots in and its tree out in one round trip")
    func largeRender() throws {
        let (worker, _) = try LaunchedWorker.launch("stress.json")
        let token = try worker.open("grid", screen: 4, argument: "10000")
        let (first, tree) = try worker.render(token, screen: 4)
        let buttons = tree?.allNodes.filter { $0.type == "Button" } ?? []
        #expect(buttons.count == 10_000)
        let rowZero = try #require(buttons.first { $0.fields["label"] == "row 0: 0" })
        #expect(try worker.call(.action(instance: token, name: ViewInput.tap.actionName, payload: ViewInput.tap.payload(view: rowZero.id))).status.isOK)
        let tapped = try #require(worker.host.state[4]?.values.first)
        // Every row's slot holds the tapped value: 10,000 slots travel with the request.
        for button in buttons {
            let cell = String(button.id.dropLast("/Button".count))
            worker.host.state[4, default: [:]][IsolationSlotKey(identity: cell, index: 0)] =
                IsolationStateSlot(identity: cell, index: 0, fingerprint: tapped.fingerprint, bytes: tapped.bytes)
        }
        let (second, updated) = try worker.render(token, screen: 4)
        #expect(first.tree.count > second.tree.count, "the first tree defines the identities, later ones name them by number")
        #expect(second.tree.count > 100_000, "\(second.tree.count) bytes")
        #expect(worker.lastUsed.count == 10_000)
        #expect(worker.host.requests(named: "state_read").isEmpty)
        #expect(updated?.texts.contains("row 9999: 1") == true)
    }

    // MARK: Exports

    @Test("exports run through libffi in the worker")
    func exports() throws {
        let (worker, _) = try LaunchedWorker.launch("greeter.json")
        #expect(try worker.call(.callExport(symbol: "greeter_add", arguments: [.int32(2), .int32(40)])) == .exported(.int32(42)))
        #expect(try worker.call(.callExport(symbol: "greeter_greet", arguments: [.string("Ada")])) == .exported(.string("Hello, Ada!")))
        #expect(try worker.call(.callExport(symbol: "greeter_reverse", arguments: [.bytes([1, 2, 3])])) == .exported(.bytes([3, 2, 1])))
        #expect(try worker.call(.callExport(symbol: "greeter_average", arguments: [.double(1), .double(2)])) == .exported(.double(1.5)))
        guard case .exportFailed(let unknown) = try worker.call(.callExport(symbol: "greeter_nothing", arguments: [])) else {
            throw TestFailure("an unknown export was called")
        }
        #expect(unknown.code == .unknownSymbol)
        guard case .exportFailed(let arity) = try worker.call(.callExport(symbol: "greeter_add", arguments: [.int32(1)])) else {
            throw TestFailure("a call with one argument of two was made")
        }
        #expect(arity.code == .arity)

        let count = 2_000
        let started = ContinuousClock.now
        for _ in 0..<count { _ = try worker.call(.callExport(symbol: "greeter_add", arguments: [.int32(1), .int32(2)])) }
        print("worker export call round trip: \((ContinuousClock.now - started) / count) per call (\(count) calls)")
    }

    // MARK: Threads and tasks

    @Test("an activate that fails part-way is followed by deactivate; its task is cancelled, awaited and released before the reply")
    func failedActivationCancelsTasks() throws {
        let worker = try LaunchedWorker.launchFixtures()
        guard case .created(_, let token) = try worker.call(.create(screen: 5, route: "task-then-fail", argument: [])) else {
            throw TestFailure("create failed")
        }
        let status = try worker.call(.activate(instance: token)).status
        #expect(status.code == 5 && status.message.contains("activate fails after starting a task"))
        #expect(try worker.call(.callExport(symbol: "fx_task_runs_finished", arguments: [])) == .exported(.int32(1)))
        #expect(try worker.call(.callExport(symbol: "fx_task_releases", arguments: [])) == .exported(.int32(1)))
        #expect(try worker.call(.callExport(symbol: "fx_deactivations", arguments: [])) == .exported(.int32(1)), "the worker deactivates before it answers")
        // The host's own deactivate request after the failure finds the instance inactive:
        // the plugin's deactivate is not called a second time.
        _ = try worker.call(.deactivate(instance: token))
        #expect(try worker.call(.callExport(symbol: "fx_deactivations", arguments: [])) == .exported(.int32(1)))
    }

    @Test("a main-thread function called from a plugin thread answers BERTH_ERR_STATE without reaching the host")
    func offThreadCallRefused() throws {
        let worker = try LaunchedWorker.launchFixtures()
        _ = try worker.open("off-thread", screen: 9)
        let ran = try eventually { try worker.call(.callExport(symbol: "fx_task_runs_finished", arguments: [])) != .exported(.int32(0)) }
        guard ran else { throw TestFailure("the off-thread task never ran") }
        #expect(try worker.call(.callExport(symbol: "fx_offthread_status", arguments: [])) == .exported(.int32(4)))
        #expect(worker.host.requests(named: "navigate").isEmpty)
    }

    // MARK: Failure

    @Test("a worker killed with SIGSEGV is a typed peer-closed error and a named signal")
    func killedWorker() throws {
        let (worker, _) = try LaunchedWorker.launch("counter.json")
        #expect(worker.process.kill(signal: SIGSEGV))
        #expect(throws: ChannelError.self) { try worker.call(.callExport(symbol: "counter_bumps", arguments: [])) }
        do {
            _ = try worker.call(.callExport(symbol: "counter_bumps", arguments: []))
        } catch {
            #expect(error.code == .peerClosed, "\(error)")
        }
        let ended = worker.process.waitForExit()
        #expect(ended == .signaled(signal: SIGSEGV, coreDumped: ended.description.contains("core")))
        #expect(ended.signalName == "SIGSEGV")
        #expect(!worker.process.kill(), "a reaped worker is not signalled again")
    }

    @Test("a trap in plugin code kills only its worker: the action's call is peer-closed, the signal named")
    func pluginTrap() throws {
        let (worker, _) = try LaunchedWorker.launch("counter.json")
        let token = try worker.open("counter", screen: 2, argument: "600000")
        let (_, tree) = try worker.render(token, screen: 2)
        let stepper = try #require(tree?.allNodes.first { $0.type == "Stepper" })
        let step = ViewInput.step(.up).payload(view: stepper.id)
        #expect(try worker.call(.action(instance: token, name: ViewInput.step(.up).actionName, payload: step)).status.isOK)
        // The host holds the stepper at Int.max; the next step overflows inside the plugin.
        let slot = try #require(worker.host.state[2]?.values.first)
        worker.host.state[2]?[slot.key]?.bytes = withUnsafeBytes(of: Int64.max.littleEndian, Array.init)
        let (_, full) = try worker.render(token, screen: 2)
        #expect(full?.allNodes.first { $0.type == "Stepper" }?.fields["value"] == String(Int64.max))
        #expect { try worker.call(.action(instance: token, name: ViewInput.step(.up).actionName, payload: step)) } throws: { error in
            (error as? ChannelError)?.code == .peerClosed
        }
        let ended = worker.process.waitForExit()
        #expect(ended.signalName == "SIGILL" || ended.signalName == "SIGTRAP", "\(ended)")
    }

    @Test("a call to a stopped worker times out, and its late reply is dropped")
    func timeout() throws {
        let (worker, _) = try LaunchedWorker.launch("greeter.json")
        #expect(worker.process.kill(signal: SIGSTOP))
        let started = ContinuousClock.now
        do {
            _ = try worker.channel.call(.callExport(symbol: "greeter_add", arguments: [.int32(1), .int32(1)]), timeout: .milliseconds(200))
            Issue.record("a stopped worker answered")
        } catch {
            #expect(error.code == .timedOut, "\(error)")
        }
        // Not a timing: a timeout that fires before its duration is wrong on any machine.
        let waited = ContinuousClock.now - started
        #expect(waited >= .milliseconds(200), "gave up after \(waited)")
        #expect(worker.process.kill(signal: SIGCONT))
        let answer = try worker.call(.callExport(symbol: "greeter_add", arguments: [.int32(2), .int32(40)]))
        #expect(answer == .exported(.int32(42)), "the answer to the abandoned call (2) was dropped")
    }

    @Test("a worker exits when the host closes its end of the channel")
    func exitsWhenHostCloses() throws {
        let (worker, _) = try LaunchedWorker.launch("greeter.json")
        worker.channel.close()
        #expect(worker.process.waitForExit(timeout: .seconds(10)) == .exited(status: IsolationWorker.ExitStatus.hostGone.rawValue))
    }

    /// A shell in the host's place: it starts the worker on the channel it was given as
    /// descriptor 3, says the worker's pid, and waits until it is killed. The shell, and the worker's pid.
    static func workerBehindAShell(_ scripts: ScriptFolder) throws -> (WorkerProcess, Int32) {
        let shell = try scripts.spawn("intermediate", "\"$BERTH_TEST_WORKER\" --fd 3 --parent $$ &\necho \"worker $!\" >&2\nwait\n",
                                      environment: ["BERTH_TEST_WORKER": LaunchedWorker.executable])
        eventually { shell.standardErrorTail.contains { $0.hasPrefix("worker ") } }
        return (shell, try #require(shell.standardErrorTail.first { $0.hasPrefix("worker ") }.flatMap { Int32($0.dropFirst(7)) }))
    }

    /// Loads Greeter in `shell`'s worker, sandboxed by a policy with the system-call filter
    /// and no cgroup folders (as a worker the host could make none for), `memoryLimit` its
    /// memory limit; `recorder` answers its calls (Greeter's entry registers a service).
    static func sandboxedGreeterHello(_ shell: WorkerProcess, _ recorder: RecordingHost,
                                      memoryLimit: UInt64 = SandboxPolicy.defaultMemoryLimit) throws {
        let data = FileManager.default.temporaryDirectory.appendingPathComponent("berth-sandboxed-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: data, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: data) }
        let (manifest, problems) = PluginManifest.load(path: BuildProducts.manifest("greeter.json"))
        let loaded = try #require(manifest, "\(problems)")
        let library = BuildProducts.library(loaded.library)
        let policy = try SandboxPolicy(readPaths: [ParentPath.of(library)], writePaths: [data], dataFolder: data, network: false,
                                       memoryLimit: memoryLimit).withSystemCallFilter(plugin: loaded.id)
        #expect(policy.cgroups == nil)
        shell.channel.handler = recorder
        // A deadline, not a timing: the sandboxed start outlasted the default 30 s budget in a
        // fresh-clone CI while the machine built.
        shell.channel.callBudget = CallBudget(maximumNestedRequests: CallBudget.worker.maximumNestedRequests, maximumDuration: .seconds(300))
        let reply = try shell.channel.call(.hello(WorkerHello(manifest: loaded, libraryPath: library, sandbox: policy)), timeout: .seconds(300))
        guard case .hello = reply else { throw TestFailure("the sandboxed hello failed: \(reply)") }
    }

    @Test("a worker dies with the process that spawned it (PR_SET_PDEATHSIG)")
    func diesWithItsParent() throws {
        let scripts = try ScriptFolder()
        let (shell, worker) = try Self.workerBehindAShell(scripts)
        #expect(try shell.channel.call(.unload(), timeout: .seconds(10)).status.code == 4, "the worker serves (nothing loaded yet)")
        #expect(shell.kill())
        #expect(shell.waitForExit().signalName == "SIGKILL")
        // Its parent gone, the worker is killed too, and its end of the channel closes.
        #expect { try shell.channel.call(.unload(), timeout: .seconds(10)) } throws: { ($0 as? ChannelError)?.code == .peerClosed }
        // Gone, or a zombie waiting for init to reap it (its descriptors close before that).
        func ended() -> Bool {
            kill(worker, 0) != 0 || (try? String(contentsOfFile: "/proc/\(worker)/stat", encoding: .utf8))?.contains(") Z ") == true
        }
        #expect(eventually { ended() }, "the worker outlived its parent")
        if !ended() { kill(worker, SIGKILL) }
    }

    @Test("a sandboxed worker's whole PID namespace dies with the process that spawned it (PR_SET_PDEATHSIG, then init's end)")
    func namespaceDiesWithItsParent() throws {
        let scripts = try ScriptFolder()
        let (shell, spawned) = try Self.workerBehindAShell(scripts)
        let recorder = RecordingHost()
        try Self.sandboxedGreeterHello(shell, recorder)
        // The spawned worker waits outside; its children are the namespace's init (pid 1 there)
        // and the worker that serves the channel (the spawned one's pid there).
        let children = ProcessTable.children(of: spawned)
        let initPID = try #require(children.first { ProcessTable.innermostPID(of: $0) == 1 })
        let inside = try #require(children.first { ProcessTable.innermostPID(of: $0) == spawned })
        #expect((try? String(contentsOfFile: "/proc/\(spawned)/comm", encoding: .utf8)) == "berth-ns-wait\n")
        #expect(shell.kill())
        #expect(shell.waitForExit().signalName == "SIGKILL")
        #expect { try shell.channel.call(.unload(), timeout: .seconds(10)) } throws: { ($0 as? ChannelError)?.code == .peerClosed }
        func ended(_ pid: Int32) -> Bool {
            kill(pid, 0) != 0 || (try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8))?.contains(") Z ") == true
        }
        #expect(eventually { ended(spawned) && ended(initPID) && ended(inside) }, "a process of the worker outlived its parent")
        for pid in [inside, initPID, spawned] where !ended(pid) { kill(pid, SIGKILL) }
        withExtendedLifetime(recorder) {}
    }

    @Test("the spawner keeps a crashing process's fatal line and names its signal")
    func fatalLine() throws {
        let scripts = try ScriptFolder()
        let process = try scripts.spawn("crasher", "echo 'starting' >&2\necho 'Fatal error: Index out of range' >&2\necho 'after the fatal line' >&2\nkill -ILL $$\n")
        let ended = process.waitForExit()
        #expect(ended.signalName == "SIGILL")
        #expect(process.lastFatalLine == "Fatal error: Index out of range")
        #expect(process.standardErrorTail == ["starting", "Fatal error: Index out of range", "after the fatal line"])
        #expect(ended.description.hasPrefix("killed by SIGILL (signal 4)"))

        let other = try scripts.spawn("mention", "echo 'fatal: no such object' >&2\nexit 128\n")
        #expect(other.waitForExit() == .exited(status: 128))
        #expect(other.lastFatalLine == "fatal: no such object", "without a Swift fatal error, a line mentioning fatal")
    }

    @Test("the worker executable is found beside the running binary")
    func locate() throws {
        let found = try #require(WorkerProcess.locateExecutable())
        #expect(found == LaunchedWorker.executable)
    }
}
