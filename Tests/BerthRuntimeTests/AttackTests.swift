@_spi(Engine) import BerthRuntime
import BerthTestSupport
import Foundation
import Glibc
import Testing

/// The attack suite (Docs/security.md, "What was tried"): a hostile C plugin
/// (Tests/Fixtures/BerthAttacker) with `"capabilities": []`, always in a worker, tries each
/// way out of its sandbox from inside it. Run as root (CI and these machines) the
/// capability checks cover the bounding set too; as another user only the effective set
/// can be checked (a non-root process cannot clear its bounding set, nor needs to).
@MainActor
@Suite("Attacks from a sandboxed plugin")
struct AttackTests {
    let workspace = PluginWorkspace()

    /// Loads the attacker in a worker with `capabilities`.
    func attacker(_ capabilities: [String] = [], isolation: String = "process", settings: IsolationSettings = TestIsolation.settings,
                          manifest extra: [String: Any] = [:]) throws -> (BerthHost, PluginGeneration) {
        let folder = (workspace.plugins as NSString).appendingPathComponent("org.berth.attacker")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try? FileManager.default.copyItem(atPath: BuildProducts.library("libBerthAttacker.so"), toPath: folder + "/libBerthAttacker.so")
        let exports: [(String, [String])] = [
            ("attack_unix_connect", ["string"]), ("attack_tiocsti", []), ("attack_own_session", []), ("attack_getenv", ["string"]),
            ("attack_effective_capabilities", []), ("attack_bounding_capabilities", []), ("attack_mknod", []), ("attack_fork", []),
            ("attack_clone3", []), ("attack_thread", []), ("attack_socket", ["int32", "int32"]), ("attack_udp", ["int32"]),
            ("attack_execve", ["string"]), ("attack_memfd_exec", []), ("attack_allocate", ["int32"]), ("attack_descriptor_open", ["string"]),
            ("attack_oom_score_adj", []), ("attack_sigsys_handler", []), ("attack_spin", ["int32"]),
            ("attack_prlimit", ["int32", "int32"]), ("attack_kill", ["int32", "int32"]), ("attack_io_uring", []),
            ("attack_socketpair_sendto", ["string"]), ("attack_socket_protocol", ["int32", "int32", "int32"]),
            ("attack_list_unix_sockets", ["string"]), ("attack_chmod", ["string"]), ("attack_fchmod", ["string"]),
            ("attack_utimensat", ["string"]), ("attack_setxattr", ["string"]), ("attack_keyring", []), ("attack_threads", ["int32"]),
            ("attack_shared_memory", ["int32"]), ("attack_fallocate", ["int32"]), ("attack_read", ["string"]),
            ("attack_own_pid", []), ("attack_parent_pid", []), ("attack_process_exists", ["int32"]),
        ]
        workspace.write(manifest: [
            "id": "org.berth.attacker", "name": "Attacker", "version": "1.0.0", "abi": "1.0", "library": "libBerthAttacker.so",
            "entry": "berth_attacker_entry_v1", "runtime": "c", "routes": ["attack"], "isolation": isolation, "capabilities": capabilities,
            "exports": exports.map { ["symbol": $0.0, "params": $0.1, "returns": "int32"] as [String: Any] },
        ].merging(extra) { _, new in new }, in: folder)
        let host = try workspace.makeHost(isolation: settings)
        return (host, try host.load("org.berth.attacker"))
    }

    func attack(_ generation: PluginGeneration, _ symbol: String, _ arguments: FFIValue...) throws -> Int32 {
        guard case .int32(let value) = try generation.call(symbol, arguments: arguments) else {
            Issue.record("\(symbol) did not return an int32")
            return -1
        }
        return value
    }

    @Test("a worker inherits no host variable, no terminal, no session and no descriptor of the host's")
    func inheritsNothing() throws {
        // A descriptor the host left open across exec: the worker must not get it.
        let marker = workspace.root + "/left-open-by-the-host"
        let leaked = open(marker, O_RDWR | O_CREAT, 0o600)
        defer { close(leaked) }
        #expect(ProcessInfo.processInfo.environment["PATH"] != nil, "the test needs a host variable to look for")
        let (_, generation) = try attacker()
        for name in ["PATH", "HOME", "XDG_RUNTIME_DIR", "SSH_AUTH_SOCK", "USER"] {
            #expect(try attack(generation, "attack_getenv", .string(name)) == ENOENT, "\(name) reached the worker")
        }
        #expect(try attack(generation, "attack_getenv", .string("BERTH_PLUGIN_DATA")) == 0)
        #expect(try attack(generation, "attack_own_session") == 1, "the worker shares the host's session")
        // Seen from the host: the process it spawned leads a session, and the plugin's process is in it.
        let spawned = try #require(generation.workerPID)
        #expect(getsid(spawned) == spawned)
        #expect(getsid(try #require(generation.workerPluginPID)) == spawned)
        #expect(try attack(generation, "attack_descriptor_open", .string("left-open-by-the-host")) == ENOENT)
        #expect(try attack(generation, "attack_tiocsti") == EPERM)
    }

    @Test("a worker holds no capability and makes no device node")
    func noCapabilities() throws {
        let (_, generation) = try attacker()
        #expect(try attack(generation, "attack_effective_capabilities") == 0)
        if getuid() == 0 {
            #expect(try attack(generation, "attack_bounding_capabilities") == 0)
        }
        let mknod = try attack(generation, "attack_mknod")
        #expect(mknod == EACCES || mknod == EPERM, "mknod: \(String(cString: strerror(mknod)))")
    }

    @Test("a worker starts no process and runs no program, while its threads work")
    func noProcesses() throws {
        let (_, generation) = try attacker()
        #expect(try attack(generation, "attack_fork") == EPERM)
        #expect(try attack(generation, "attack_clone3") == ENOSYS)
        #expect(try attack(generation, "attack_thread") == 0)
        let worker = (BuildProducts.directory as NSString).appendingPathComponent("berth-worker")
        #expect(try attack(generation, "attack_execve", .string(worker)) == EPERM)
        #expect(try attack(generation, "attack_memfd_exec") == EPERM)
    }

    @Test("no Unix, netlink, packet, raw, UDP or TCP socket opens without network")
    func sockets() throws {
        let listener = try UnixListener(path: workspace.root + "/listener.sock")
        let (_, generation) = try attacker()
        #expect(try attack(generation, "attack_unix_connect", .string(listener.path)) == EPERM)
        let refused: [(Int32, Int32)] = [(AF_UNIX, 1), (AF_UNIX, 2), (16, 3), (17, 3), (AF_INET, 3), (AF_INET6, 3), (AF_INET, 2), (AF_INET6, 2)]
        for (domain, type) in refused {
            #expect(try attack(generation, "attack_socket", .int32(domain), .int32(type)) == EPERM, "socket(\(domain), \(type))")
        }
        #expect(try attack(generation, "attack_udp", .int32(9)) == EPERM)
        #expect(try attack(generation, "attack_socket", .int32(AF_INET), .int32(1)) == EPERM)
    }

    @Test("network allows TCP sockets over IPv4 and IPv6, and still no UDP, Unix or raw socket")
    func tcpWithNetwork() throws {
        let (_, generation) = try attacker(["network"])
        #expect(try attack(generation, "attack_socket", .int32(AF_INET), .int32(1)) == 0)
        #expect(try attack(generation, "attack_socket", .int32(AF_INET6), .int32(1)) == 0)
        #expect(try attack(generation, "attack_udp", .int32(9)) == EPERM)
        #expect(try attack(generation, "attack_socket", .int32(AF_UNIX), .int32(1)) == EPERM)
        #expect(try attack(generation, "attack_socket", .int32(AF_INET), .int32(3)) == EPERM)
    }

    @Test("a 3 GiB allocation fails inside the plugin, the worker answers on, and the OOM killer would pick it first")
    func memoryLimit() throws {
        let (host, generation) = try attacker()
        #expect(try attack(generation, "attack_allocate", .int32(3072)) == ENOMEM)
        #expect(try attack(generation, "attack_allocate", .int32(64)) == 0)
        // The OOM killer prefers the worker to the host.
        #expect(try attack(generation, "attack_oom_score_adj") == 800)
        #expect(host.plugins["org.berth.attacker"]?.state != .crashed)
    }

    @Test("the host's memory limit for plugins (--max-plugin-memory) holds in the worker")
    func memoryLimitSetting() throws {
        var settings = TestIsolation.settings
        settings.maxPluginMemory = 128 << 20
        let (_, generation) = try attacker(settings: settings)
        #expect(try attack(generation, "attack_allocate", .int32(256)) == ENOMEM)
        #expect(try attack(generation, "attack_allocate", .int32(32)) == 0)
    }

    @Test("a worker left unconfined (confinesWorkers off, for measuring) takes no limit: the allocation the limit refuses succeeds")
    func unconfinedWorker() throws {
        var settings = TestIsolation.settings
        settings.maxPluginMemory = 128 << 20
        settings.confinesWorkers = false
        let (_, generation) = try attacker(settings: settings)
        #expect(try attack(generation, "attack_allocate", .int32(256)) == 0)
    }

    @Test("an in-process plugin in a folder a worker can write is refused, with the folder named")
    func inProcessFromWorkerWritableFolder() throws {
        let host = try workspace.makeHost(isolation: .inProcessOnly)
        // A plugin copied into a data folder, as a sandboxed plugin could copy itself.
        let planted = host.runtimeDirectory.path + "/data/org.berth.probe-planted"
        try FileManager.default.createDirectory(atPath: planted, withIntermediateDirectories: true)
        let staged = workspace.stageProbe()
        for file in ["plugin.json", "libBerthProbe.so"] {
            try FileManager.default.copyItem(atPath: staged + "/" + file, toPath: planted + "/" + file)
        }
        try FileManager.default.removeItem(atPath: staged)
        #expect {
            try host.loadFolder(planted)
        } throws: { error in
            "\(error)".contains("refused in-process") && "\(error)".contains(host.runtimeDirectory.path)
        }
        #expect(host.generation(of: "org.berth.probe") == nil)
    }

    @Test("ending a worker kills what it left running in its process group")
    nonisolated func descendantsDieWithTheWorker() async throws {
        let scripts = try ScriptFolder()
        let worker = try scripts.spawn("parent", "sleep 300 &\necho \"child $!\" >&2\nwait\n")
        eventually { worker.standardErrorTail.contains { $0.hasPrefix("child ") } }
        let child = try #require(worker.standardErrorTail.first { $0.hasPrefix("child ") }.flatMap { Int32($0.dropFirst(6)) })
        #expect(worker.kill(signal: SIGTERM))
        _ = worker.waitForExit()
        func ended() -> Bool {
            kill(child, 0) != 0 || (try? String(contentsOfFile: "/proc/\(child)/stat", encoding: .utf8))?.contains(") Z ") == true
        }
        #expect(eventually { ended() }, "the worker's child outlived it")
        if !ended() { kill(child, SIGKILL) }
    }
}

extension AttackTests {
    @Test("a render of 1,000,000 views, of 250,000 views, with a 2 MiB text or 2,500,000 numbers is refused in one line, and the next render works",
          arguments: ["process", "in-process"])
    func renderLimits(isolation: String) async throws {
        var work = await LongMainActorWork.begin(slice: .zero)
        defer { work.end() }
        let (host, _) = try attacker(isolation: isolation)
        let screen = try host.push("org.berth.attacker/attack")
        for (action, size, reason) in [("big-render", "1000000", "bytes, over the limit of"), ("big-render", "250000", "the tree has 250001 views, over the limit of 200000"),
                                       ("long-text", "2097152", "bytes is over the limit of"),
                                       ("junk-render", "2500000", "the JSON has 2500007 values and member names, over the limit of 2000000")] {
            // Each attack renders twice on the main actor: one per slice.
            await work.pause()
            try host.sendBlocking(screen: screen.id, action: action, payload: Array(size.utf8))
            #expect {
                try host.render(screen: screen.id)
            } throws: { error in
                let text = "\(error)"
                return text.contains(reason) && !text.contains("\n")
            }
        }
        try host.sendBlocking(screen: screen.id, action: "big-render", payload: Array("3".utf8))
        #expect(try host.render(screen: screen.id)?.allNodes.count == 4)
        #expect(host.plugins["org.berth.attacker"]?.state != .crashed)
    }

    @Test("an action that calls the host 300,000 times is cut off by the call budget and its worker handled as unresponsive")
    func hostCallStorm() throws {
        let (host, _) = try attacker(["context"])
        let screen = try host.push("org.berth.attacker/attack")
        #expect {
            try host.sendBlocking(screen: screen.id, action: "storm", payload: Array("300000".utf8))
        } throws: { error in
            "\(error)".contains("unresponsive")
        }
        #expect(host.events.contains { $0.kind == .crashed && $0.message.contains("unresponsive") })
    }
}

/// A Unix stream socket listening at `path`; closed and removed when released.
final class UnixListener {
    let descriptor: Int32
    let path: String

    init(path: String) throws {
        self.path = path
        descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        var address = ControlConnectionForTests.address(path)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) == 0 }
        }
        guard bound, listen(descriptor, 4) == 0 else { throw POSIXError(POSIXErrorCode(rawValue: Glibc.errno) ?? .EIO) }
    }

    deinit {
        close(descriptor)
        unlink(path)
    }
}
