@_spi(Engine) import BerthRuntime
import BerthTestSupport
import Foundation
import Glibc
import Testing

/// What the manifest adds to a worker's sandbox (`limits`, `environment`), what a refused
/// system call reports, and the processor time `status` shows: the attacker again, in a worker.
extension AttackTests {
    @Test("a refused call returns EPERM to the plugin, and a denied event names the plugin and the call")
    func refusedCallsAreReported() async throws {
        let (host, generation) = try attacker()
        let worker = (BuildProducts.directory as NSString).appendingPathComponent("berth-worker")
        #expect(try attack(generation, "attack_execve", .string(worker)) == EPERM)
        #expect(try attack(generation, "attack_fork") == EPERM)
        #expect(try attack(generation, "attack_socket", .int32(AF_UNIX), .int32(1)) == EPERM)
        #expect(try attack(generation, "attack_udp", .int32(9)) == EPERM)
        // A call the worker does not describe itself is named by the host.
        #expect(try attack(generation, "attack_io_uring") == EPERM)
        for call in ["execve", "fork (clone without CLONE_THREAD)", "socket(AF_UNIX)", "socket(AF_INET, SOCK_DGRAM)", "io_uring_setup"] {
            let reported = await eventuallyAsync {
                host.events.contains { $0.kind == .denied && $0.subject == .plugin("org.berth.attacker") && $0.message == "\(call) refused by the system-call filter: EPERM" }
            }
            #expect(reported, "no denied event for \(call): \(host.events.filter { $0.kind == .denied }.map(\.description))")
        }
        #expect(host.plugins["org.berth.attacker"]?.state != .crashed)
    }

    @Test("the plugin cannot take SIGSYS from the worker, and 150 refusals of one call make three events")
    func refusalsCannotFloodTheLog() async throws {
        let (host, generation) = try attacker()
        #expect(try attack(generation, "attack_sigsys_handler") == EPERM)
        let worker = (BuildProducts.directory as NSString).appendingPathComponent("berth-worker")
        for _ in 0..<150 {
            #expect(try attack(generation, "attack_execve", .string(worker)) == EPERM)
        }
        func execveEvents() -> [HostEvent] { host.events.filter { $0.kind == .denied && $0.message.hasPrefix("execve refused") } }
        #expect(await eventuallyAsync { execveEvents().contains { $0.message.hasSuffix("(100 times so far)") } }, "\(execveEvents().map(\.description))")
        #expect(execveEvents().count == 3, "\(execveEvents().map(\.description))")
        #expect(host.events.contains { $0.kind == .denied && $0.message.hasPrefix("rt_sigaction(SIGSYS) refused") })
    }

    @Test("a manifest's memory limit holds in the worker, and the host's --max-plugin-memory is its ceiling")
    func manifestMemoryLimit() throws {
        let (_, generation) = try attacker(manifest: ["limits": ["memory": "128 MiB"]])
        #expect(try attack(generation, "attack_allocate", .int32(256)) == ENOMEM)
        #expect(try attack(generation, "attack_allocate", .int32(32)) == 0)
        var settings = TestIsolation.settings
        settings.maxPluginMemory = 128 << 20
        let (_, capped) = try attacker(settings: settings, manifest: ["limits": ["memory": "2 GiB"]])
        #expect(try attack(capped, "attack_allocate", .int32(256)) == ENOMEM)
    }

    @Test("a host variable the manifest names reaches the worker; the others still do not")
    func manifestEnvironment() throws {
        setenv("ATTACKER_API_BASE", "https://api.example.com", 0)
        let (_, generation) = try attacker(manifest: ["environment": ["ATTACKER_API_BASE"]])
        #expect(try attack(generation, "attack_getenv", .string("ATTACKER_API_BASE")) == 0)
        #expect(try attack(generation, "attack_getenv", .string("PATH")) == ENOENT)
    }

    @Test("a manifest cannot pass the host's own variables nor ask for a limit that is not a size, each in one line",
          arguments: [
              (#"{"environment": ["LD_PRELOAD"]}"#, "environment[0]", "'LD_PRELOAD' is never passed to a plugin"),
              (#"{"environment": ["PATH", "XDG_RUNTIME_DIR"]}"#, "environment[1]", "'XDG_RUNTIME_DIR' is never passed to a plugin"),
              (#"{"environment": ["BERTH_CONTROL_TOKEN"]}"#, "environment[0]", "BERTH_ variables are the host's own"),
              (#"{"limits": {"memory": "lots"}}"#, "limits.memory", "'lots' is not a size such as \"512 MiB\""),
              (#"{"limits": {"memory": "1 MiB"}}"#, "limits.memory", "below the least a worker needs"),
          ])
    func manifestRefusals(fields: String, field: String, text: String) throws {
        var manifest: [String: Any] = ["id": "org.berth.attacker", "name": "Attacker", "version": "1.0.0", "abi": "1.0",
                                       "library": "libBerthAttacker.so", "entry": "berth_attacker_entry_v1", "runtime": "c"]
        let extra = try #require(try JSONSerialization.jsonObject(with: Data(fields.utf8)) as? [String: Any])
        manifest.merge(extra) { _, new in new }
        let data = try JSONSerialization.data(withJSONObject: manifest)
        let (decoded, problems) = PluginManifest.decode(data, path: "/plugins/attacker/plugin.json")
        #expect(decoded == nil)
        let errors = problems.filter { $0.severity == .error }.map(\.description)
        #expect(errors.count == 1 && errors.allSatisfy { $0.contains("/plugins/attacker/plugin.json") && $0.contains(field) && $0.contains(text) && !$0.contains("\n") },
                "\(errors)")
    }

    @Test("a memory limit in the manifest of an in-process plugin is a warning: it cannot be enforced there")
    func inProcessMemoryLimitWarns() throws {
        let manifest: [String: Any] = ["id": "org.berth.attacker", "name": "Attacker", "version": "1.0.0", "abi": "1.0",
                                       "library": "libBerthAttacker.so", "entry": "berth_attacker_entry_v1", "runtime": "c",
                                       "isolation": "in-process", "limits": ["memory": "256 MiB"]]
        let (decoded, problems) = PluginManifest.decode(try JSONSerialization.data(withJSONObject: manifest), path: "plugin.json")
        #expect(decoded?.limits.memory == 256 << 20)
        #expect(problems.map(\.description) == ["plugin.json: limits.memory: warning: cannot be enforced for a plugin that runs in-process (it shares the host's memory); run it with \"isolation\": \"process\""])
    }

    @Test("the host reads the processor time each worker has used")
    func workerProcessorTime() throws {
        let (_, generation) = try attacker()
        #expect(try attack(generation, "attack_spin", .int32(300)) == 0)
        let used = try #require(generation.workerProcessorTime)
        #expect(used >= .milliseconds(250), "\(used)")
    }

    @Test("a descendant that left the worker's session and process group dies with the worker's cgroup",
          .enabled(if: WorkerCgroup.isAvailable, "the host cannot make cgroups here (needs a writable cgroup2 mount: root or a delegated subtree)"))
    nonisolated func descendantsDieWithTheCgroup() async throws {
        let scripts = try ScriptFolder()
        // Waits until the host moved it into its cgroup (as a real worker runs no plugin code before its hello).
        let worker = try scripts.spawn("escaper", "until grep -q berth- /proc/$$/cgroup; do sleep 0.01; done\nsetsid sh -c 'echo \"child $$\" >&2; exec sleep 300' &\nwait\n")
        #expect(worker.cgroup != nil)
        #expect(eventually(timeout: .seconds(30)) { worker.standardErrorTail.contains { $0.hasPrefix("child ") } })
        let child = try #require(worker.standardErrorTail.first { $0.hasPrefix("child ") }.flatMap { Int32($0.dropFirst(6)) })
        #expect(getsid(child) == child, "the child did not leave the worker's session")
        #expect(worker.kill(signal: SIGTERM))
        _ = worker.waitForExit()
        func ended() -> Bool {
            kill(child, 0) != 0 || (try? String(contentsOfFile: "/proc/\(child)/stat", encoding: .utf8))?.contains(") Z ") == true
        }
        #expect(eventually(timeout: .seconds(10)) { ended() }, "the worker's child outlived it")
        if !ended() { kill(child, SIGKILL) }
        if let path = worker.cgroup?.path {
            #expect(eventually(timeout: .seconds(10)) { !FileManager.default.fileExists(atPath: path) }, "\(path) was left behind")
        }
    }
}
