@_spi(Engine) import BerthRuntime
import BerthTestSupport
import Foundation
import Glibc
import Testing

/// The attacks of issue 40 ("a sandbox that is a wall"): each one got through on 4020868.
/// The attacker (capabilities: none) runs in a real worker in the default mode; each attempt
/// must be refused or contained, and the worker and the host must answer afterwards.
extension AttackTests {
    /// A process of the test's own user for the attacker to aim at (never the test itself:
    /// on a host without the wall, RLIMIT_CPU of 1 s would end the test run).
    final class Victim {
        let process = Process()
        init() throws {
            process.executableURL = URL(fileURLWithPath: "/bin/sleep")
            process.arguments = ["120"]
            try process.run()
        }
        var pid: Int32 { process.processIdentifier }
        var limits: String { (try? String(contentsOfFile: "/proc/\(pid)/limits", encoding: .utf8)) ?? "" }
        deinit {
            // SIGKILL, not `terminate()`: a test process that ran a ServiceGroup ignores
            // SIGTERM, and a child inherits that (the victim then lived its full 120 s).
            kill(pid, SIGKILL)
            process.waitUntilExit()
        }
    }

    @Test("prlimit64 (RLIMIT_CPU, RLIMIT_NOFILE) and kill aimed at another process are refused; its limits stay")
    func noLimitsOnOthers() throws {
        let victim = try Victim()
        let before = victim.limits
        let (host, generation) = try attacker()
        #expect(try attack(generation, "attack_prlimit", .int32(victim.pid), .int32(Int32(RLIMIT_CPU.rawValue))) == EPERM)
        #expect(try attack(generation, "attack_prlimit", .int32(victim.pid), .int32(Int32(RLIMIT_NOFILE.rawValue))) == EPERM)
        #expect(try attack(generation, "attack_kill", .int32(victim.pid), .int32(SIGSTOP)) == EPERM)
        #expect(victim.limits == before)
        #expect(victim.process.isRunning)
        #expect(try attack(generation, "attack_thread") == 0)
        #expect(host.plugins["org.berth.attacker"]?.state != .crashed)
    }

    @Test("io_uring, the keyring, a socketpair datagram to a named socket, MPTCP, netlink and UDP are refused")
    func noSocketsAroundTheFilter() throws {
        let path = workspace.root + "/datagram.sock"
        let receiver = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue), 0)
        defer {
            close(receiver)
            unlink(path)
        }
        var address = ControlConnectionForTests.address(path)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(receiver, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) == 0 }
        }
        try #require(bound)
        let (host, generation) = try attacker()
        #expect(try attack(generation, "attack_io_uring") == EPERM)
        #expect(try attack(generation, "attack_keyring") == EPERM)
        #expect(try attack(generation, "attack_socketpair_sendto", .string(path)) == EPERM)
        for (domain, type, proto, what) in [(AF_INET, 1, 262, "MPTCP"), (AF_INET6, 1, 262, "MPTCP over IPv6"), (16, 3, 0, "netlink"), (16, 2, 0, "netlink datagram"),
                                            (AF_INET, 2, 17, "UDP"), (AF_INET, 1, 0, "TCP without network")] {
            #expect(try attack(generation, "attack_socket_protocol", .int32(domain), .int32(Int32(type)), .int32(Int32(proto))) == EPERM, "\(what)")
        }
        var pending: Int32 = 0
        #expect(ioctl(receiver, UInt(FIONREAD), &pending) == 0 && pending == 0, "a datagram reached the test's socket")
        #expect(host.plugins["org.berth.attacker"]?.state != .crashed)
    }

    @Test("with network, MPTCP and UDP are still refused")
    func noMPTCPWithNetwork() throws {
        let (_, generation) = try attacker(["network"])
        #expect(try attack(generation, "attack_socket_protocol", .int32(AF_INET), .int32(1), .int32(262)) == EPERM)
        #expect(try attack(generation, "attack_socket_protocol", .int32(AF_INET), .int32(2), .int32(0)) == EPERM)
        #expect(try attack(generation, "attack_socket_protocol", .int32(AF_INET), .int32(1), .int32(6)) == 0)
    }

    @Test("/proc/self/net/unix shows the worker none of the host's sockets")
    func noSocketListing() throws {
        let listener = try UnixListener(path: workspace.root + "/listed.sock")
        let (_, generation) = try attacker()
        #expect(try attack(generation, "attack_list_unix_sockets", .string(listener.path)) != 0)
    }

    @Test("chmod, fchmod, utimensat and setxattr outside the grants change nothing (a copy of berth-worker)")
    func noChangesOutsideTheGrants() throws {
        let folder = workspace.root + "/victim"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let copy = folder + "/berth-worker"
        try FileManager.default.copyItem(atPath: (BuildProducts.directory as NSString).appendingPathComponent("berth-worker"), toPath: copy)
        var before = stat()
        try #require(stat(copy, &before) == 0)
        let (host, generation) = try attacker()
        for call in ["attack_chmod", "attack_fchmod", "attack_utimensat", "attack_setxattr"] {
            let result = try attack(generation, call, .string(copy))
            #expect([EPERM, EROFS, EACCES, ENOENT].contains(result), "\(call): \(String(cString: strerror(result)))")
        }
        var after = stat()
        try #require(stat(copy, &after) == 0)
        #expect(after.st_mode == before.st_mode)
        #expect(after.st_mtim.tv_sec == before.st_mtim.tv_sec && after.st_mtim.tv_nsec == before.st_mtim.tv_nsec)
        #expect(host.plugins["org.berth.attacker"]?.state != .crashed)
    }

    @Test("the worker's root holds only its grants: files outside them do not exist there")
    func ownRoot() throws {
        let secret = workspace.root + "/secret"
        try Data("x".utf8).write(to: URL(fileURLWithPath: secret))
        let (_, generation) = try attacker()
        #expect(try attack(generation, "attack_read", .string(secret)) == ENOENT)
        #expect(try attack(generation, "attack_read", .string("/etc/passwd")) == ENOENT)
        #expect(try attack(generation, "attack_read", .string("/dev/urandom")) == 0)
    }

    @Test("3,000 threads stop at the thread limit, and the worker answers on")
    func threadLimit() throws {
        let (host, generation) = try attacker(manifest: ["limits": ["threads": 64]])
        let started = try attack(generation, "attack_threads", .int32(3000))
        #expect(started >= 0 && started < 64, "\(started) threads started")
        #expect(try attack(generation, "attack_thread") == 0)
        #expect(host.plugins["org.berth.attacker"]?.state != .crashed)
    }

    @Test("1 GiB of MAP_SHARED | MAP_ANONYMOUS memory over a 128 MiB limit is refused")
    func sharedMemoryLimit() throws {
        let (host, generation) = try attacker(manifest: ["limits": ["memory": "128 MiB"]])
        #expect(try attack(generation, "attack_shared_memory", .int32(1024)) == EPERM)
        #expect(try attack(generation, "attack_allocate", .int32(32)) == 0)
        #expect(host.plugins["org.berth.attacker"]?.state != .crashed)
    }

    @Test("a 4 GiB fallocate in the data folder fails at the disk quota; a small file still works")
    func diskQuota() throws {
        let (host, generation) = try attacker(manifest: ["limits": ["disk": "64 MiB"]])
        #expect(try attack(generation, "attack_fallocate", .int32(4096)) == EFBIG)
        #expect(try attack(generation, "attack_fallocate", .int32(1)) == 0)
        #expect(host.plugins["org.berth.attacker"]?.state != .crashed)
    }

    @Test("a worker whose runtime folder lies beneath /dev (/dev/shm) finds its shadow copies in its root")
    func runtimeFolderBeneathDev() throws {
        _ = try attacker()
        let base = "/dev/shm/berth-test-\(UUID().uuidString.prefix(8))"
        defer { try? FileManager.default.removeItem(atPath: base) }
        let host = try BerthHost(configuration: .init(pluginFolders: [workspace.plugins], runtimeBase: base, isolation: TestIsolation.settings))
        host.discover()
        defer { host.shutdown() }
        let generation = try host.load("org.berth.attacker")
        #expect(try attack(generation, "attack_thread") == 0)
    }
}

extension AttackTests {
    @Test("the worker runs in a PID namespace of its own: its parent (the waiter) is outside it, /proc lists no other process, the host's pid is out of reach, and nothing of it outlives its unload")
    func ownPIDNamespace() async throws {
        let (host, generation) = try attacker()
        #expect(generation.workerSandboxGaps?.contains("PID") != true, "\(generation.workerSandboxGaps ?? "")")
        let spawned = try #require(generation.workerPID)
        let inside = try #require(generation.workerPluginPID)
        // The worker keeps the pid the host spawned, inside its namespace; outside, it is another process.
        #expect(try attack(generation, "attack_own_pid") == spawned)
        #expect(inside != spawned)
        // Its parent, the waiter, has no pid inside the namespace: getppid() is 0 there.
        #expect(try attack(generation, "attack_parent_pid") == 0)
        // Its /proc is its namespace's: its init and itself, not the host.
        #expect(try attack(generation, "attack_process_exists", .int32(1)) == 0)
        #expect(try attack(generation, "attack_process_exists", .int32(spawned)) == 0)
        #expect(try attack(generation, "attack_process_exists", .int32(getpid())) == ENOENT, "the host is in the worker's /proc")
        let status = (try? String(contentsOfFile: "/proc/\(inside)/status", encoding: .utf8)) ?? ""
        let numbers = status.split(separator: "\n").first { $0.hasPrefix("NSpid:") }?.split(whereSeparator: { $0 == "\t" || $0 == " " }).dropFirst()
        #expect(numbers.map(Array.init) == ["\(inside)", "\(spawned)"], "\(status)")
        // The host's own pid, by number: refused (the filter), and not in its namespace anyway.
        #expect(try attack(generation, "attack_kill", .int32(getpid()), .int32(0)) != 0)
        // Memory and processor time are read where the plugin runs, not from the waiter.
        let usage = try #require(generation.workerUsage())
        #expect((usage.threads ?? 0) >= 1)
        try host.unload("org.berth.attacker")
        func ended(_ pid: Int32) -> Bool {
            kill(pid, 0) != 0 || (try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8))?.contains(") Z ") == true
        }
        #expect(await eventuallyAsync { ended(inside) && ended(spawned) }, "a process of the worker outlived its unload")
    }
}
