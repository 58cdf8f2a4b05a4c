@_spi(Engine) import BerthRuntime
import BerthTestSupport
import Foundation
import Glibc
import Testing

/// The worker's OS sandbox (no_new_privs + Landlock), tried by the probe plugin's exports
/// from inside its worker: a file in a temporary home folder, a file in /tmp outside the
/// plugin's folders, and a TCP connection to a loopback listener the test opens. Each is
/// denied without its capability and allowed with it.
@MainActor
@Suite("Worker sandbox")
struct SandboxTests {
    let workspace = PluginWorkspace()
    /// A stand-in home folder holding a private file.
    let home: String
    let secret: String
    /// A folder in /tmp the plugin was not given.
    let outside: String

    init() throws {
        home = (workspace.root as NSString).appendingPathComponent("home")
        outside = (workspace.root as NSString).appendingPathComponent("outside")
        secret = (home as NSString).appendingPathComponent("secret.txt")
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: outside, withIntermediateDirectories: true)
        try Data("private".utf8).write(to: URL(fileURLWithPath: secret))
    }

    /// Loads the probe in a worker with `capabilities` (nil: no field) and the `files` grants.
    private func probe(_ capabilities: [String]?, files: [String: [String]]? = nil) throws -> (BerthHost, PluginGeneration) {
        workspace.stageProbe {
            $0["isolation"] = "process"
            if let capabilities { $0["capabilities"] = capabilities }
            if let files { $0["files"] = files }
        }
        let host = try workspace.makeHost()
        let generation = try host.load("org.berth.probe")
        return (host, generation)
    }

    private func errno(_ generation: PluginGeneration, _ symbol: String, _ argument: FFIValue) throws -> Int32 {
        guard case .int32(let value) = try generation.call(symbol, arguments: [argument]) else {
            Issue.record("\(symbol) did not return an int32")
            return -1
        }
        return value
    }

    @Test("without capabilities the worker cannot see the home folder, write to /tmp or open a socket to a loopback port")
    func denied() throws {
        let listener = try LoopbackListener()
        let (host, generation) = try probe([])
        // Outside its grants a path is not in the worker's root at all (the mount namespace),
        // and without network no socket opens (the filter).
        #expect(try errno(generation, "probe_read", .string(secret)) == ENOENT)
        #expect(try errno(generation, "probe_write", .string((outside as NSString).appendingPathComponent("x"))) == ENOENT)
        #expect(try errno(generation, "probe_connect", .int32(Int32(listener.port))) == EPERM)
        // Its own folders stay usable: the manifest beside its library, and its data folder.
        #expect(try errno(generation, "probe_read", .string((generation.source.folder as NSString).appendingPathComponent("plugin.json"))) == 0)
        #expect(try errno(generation, "probe_write_data", .string("cache")) == 0)
        #expect(FileManager.default.fileExists(atPath: (host.runtimeDirectory.path as NSString).appendingPathComponent("data/org.berth.probe/cache")))
        #expect(!host.events.contains { $0.message.contains("without a file and network sandbox") })
    }

    @Test("files.read, files.write and network grant exactly those paths and TCP")
    func granted() throws {
        let listener = try LoopbackListener()
        let (_, generation) = try probe(["files.read", "files.write", "network"], files: ["read": [home], "write": [outside]])
        #expect(try errno(generation, "probe_read", .string(secret)) == 0)
        #expect(try errno(generation, "probe_write", .string((outside as NSString).appendingPathComponent("x"))) == 0)
        #expect(try errno(generation, "probe_connect", .int32(Int32(listener.port))) == 0)
        // A read grant is no write grant: its bind is read-only (and Landlock refuses too).
        #expect([EROFS, EACCES].contains(try errno(generation, "probe_write", .string((home as NSString).appendingPathComponent("y")))))
    }

    @Test("workers without network share the host's one empty network namespace; a worker with network keeps the host's")
    func sharedNetworkNamespace() throws {
        func namespace(_ pid: Int32?) throws -> String {
            let pid = try #require(pid)
            return try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/ns/net")
        }
        let hostNamespace = try namespace(getpid())
        workspace.stageProbe { $0["isolation"] = "process"; $0["capabilities"] = [String]() }
        workspace.stageProbe(other: true) { $0["isolation"] = "process"; $0["capabilities"] = ["network"] }
        let host = try workspace.makeHost()
        let first = try host.load("org.berth.probe")
        let firstNamespace = try namespace(first.workerPluginPID)
        #expect(firstNamespace != hostNamespace)
        // A later worker joins the same one: one namespace made, none per worker.
        try host.unload("org.berth.probe")
        let second = try host.load("org.berth.probe")
        #expect(try namespace(second.workerPluginPID) == firstNamespace)
        // Still nothing reachable there: no socket opens without network.
        let listener = try LoopbackListener()
        #expect(try errno(second, "probe_connect", .int32(Int32(listener.port))) == EPERM)
        let networked = try host.load("org.berth.probe-other")
        #expect(try namespace(networked.workerPluginPID) == hostNamespace)
    }

    @Test("a sandboxed worker cannot run a program or signal the host, whatever it declares")
    func noExecNoSignals() throws {
        let (_, generation) = try probe(["files.read", "files.write", "network"], files: ["read": ["/usr/bin"]])
        // Refused twice over: the filter refuses fork (EPERM), and Landlock grants no execute.
        #expect(try errno(generation, "probe_exec", .string("/usr/bin/true")) == EPERM)
        #expect(try errno(generation, "probe_signal", .int32(getpid())) == EPERM)
    }

    @Test("a sandboxed Swift worker whose dispatch pool stays busy for seconds keeps running")
    func busyDispatchPool() async throws {
        // libdispatch's pool monitor reads /proc/<tid>/stat of its worker threads each
        // second while work waits, and traps the process when that read is refused.
        workspace.stage("stress.json") { $0["isolation"] = "process" }
        let host = try workspace.makeHost()
        try host.load("org.berth.stress")
        let pool = try host.push("org.berth.stress/pool")
        try host.sendBlocking(screen: pool.id, action: "saturate", payload: [])
        var text = ""
        await eventuallyAsync(every: .milliseconds(50)) {
            text = (try? host.render(screen: pool.id))?.allNodes.first { $0.type == "Text" }?.fields["text"] ?? ""
            return text == "finished 8 of 8" || host.router(pool.id) == nil
        }
        #expect(text == "finished 8 of 8")
        #expect(!host.events.contains { $0.kind == .crashed }, "\(host.events.filter { $0.kind == .crashed }.map(\.description))")
        #expect(host.plugins["org.berth.stress"]?.state != .crashed)
    }

    @Test("the worker reads its own /proc entries and none of the host's")
    func procIsReadOnlyAndScoped() throws {
        let (_, generation) = try probe([])
        #expect(try errno(generation, "probe_read", .string("/proc/self/stat")) == 0)
        #expect(try errno(generation, "probe_read", .string("/proc/thread-self/stat")) == 0)
        for entry in ["stat", "cmdline", "environ", "maps", "mem", "auxv", "fd/0"] {
            let code = try errno(generation, "probe_read", .string("/proc/\(getpid())/\(entry)"))
            // Not there at all in the worker's own PID namespace (ENOENT); refused by Landlock where it has none.
            #expect(code == ENOENT || code == EACCES, "/proc/<host>/\(entry): \(String(cString: strerror(code)))")
        }
        #expect(try errno(generation, "probe_write", .string("/proc/self/comm")) == EACCES)
    }

    @Test("the PID namespace's init (which shares the unconfined waiter's memory) is out of the worker's reach through /proc")
    func initIsOutOfReach() throws {
        let (_, generation) = try probe([])
        for entry in ["mem", "status", "environ", "maps", "root/etc/hostname"] {
            let code = try errno(generation, "probe_read", .string("/proc/1/\(entry)"))
            #expect(code == EACCES || code == ENOENT, "/proc/1/\(entry) read: \(String(cString: strerror(code)))")
        }
        for entry in ["mem", "attr/current", "comm"] {
            let code = try errno(generation, "probe_write", .string("/proc/1/\(entry)"))
            #expect(code == EACCES || code == ENOENT, "/proc/1/\(entry) written: \(String(cString: strerror(code)))")
        }
    }

    @Test("a manifest without capabilities gets no file or network grant beyond the sandbox's defaults")
    func undeclared() throws {
        let listener = try LoopbackListener()
        let (_, generation) = try probe(nil, files: ["read": [home]])
        #expect(try errno(generation, "probe_read", .string(secret)) == ENOENT)
        #expect(try errno(generation, "probe_connect", .int32(Int32(listener.port))) == EPERM)
    }
}

/// A TCP listener on 127.0.0.1 with a port the kernel picks; closed when released.
final class LoopbackListener {
    let descriptor: Int32
    let port: UInt16

    init() throws {
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        self.descriptor = descriptor
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) == 0 && listen(descriptor, 8) == 0 && getsockname(descriptor, $0, &length) == 0 }
        }
        guard bound else { throw POSIXError(POSIXErrorCode(rawValue: Glibc.errno) ?? .EIO) }
        port = UInt16(bigEndian: address.sin_port)
    }

    deinit { close(descriptor) }
}
