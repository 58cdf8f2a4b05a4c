import Foundation
import Glibc
import Testing
import BerthTestSupport

/// Every file the host reads is bounded before the read starts (Docs/security.md, "The host
/// bounded"): a sparse 1.5 GiB `plugin.json` or library costs nothing to make, and used to
/// cost `berth list` gigabytes. Each is refused by its `fstat` size, in one line naming the
/// file, the size and the limit, and the peak memory of `berth list` stays small.
@Suite("Bounded reads", .blocking)
struct BoundedReadTests {
    /// 1.5 GiB: over every limit, and what the attack used.
    private static let sparseBytes: off_t = 3 << 29
    /// What `berth list` of two plugins may peak at (it takes about 30 MiB).
    private static let peakLimitKiB = 200 * 1024

    /// Runs `berth ARGUMENTS` in `directory` and returns its status, its output (both
    /// streams) and its peak resident memory, as GNU time reports it from its own `wait4`.
    /// Not this process's `wait4`: a process spawned from here starts its peak at this
    /// process's (the kernel keeps the peak of the image an exec replaces), and with the
    /// whole suite in one process that was 567 MB. time forks `berth` from its own small image.
    private func runMeasured(_ arguments: [String], in directory: String) throws -> (status: Int32, output: String, peakKiB: Int) {
        let outputPath = directory + "/measured-output.txt"
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 1, outputPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        posix_spawn_file_actions_adddup2(&actions, 1, 2)
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        let peakPath = directory + "/measured-peak.txt"
        let time = "/usr/bin/time"
        try #require(FileManager.default.isExecutableFile(atPath: time), "GNU time (Debian package time) is needed at \(time)")
        let argv = ([time, "-f", "%M", "-o", peakPath, BuildProducts.berth] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        var environment = ProcessInfo.processInfo.environment
        environment["XDG_CONFIG_HOME"] = directory + "/config"
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { envp.forEach { free($0) } }
        // The paths given are absolute: the child's working folder does not matter.
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, time, &actions, nil, argv, envp)
        try #require(spawned == 0, "posix_spawn: \(String(cString: strerror(spawned)))")
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        let output = (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
        let peak = (try? String(contentsOfFile: peakPath, encoding: .utf8))?.split(separator: "\n").last.flatMap { Int($0) }
        let measured = try #require(peak, "time wrote no peak to \(peakPath): \(output)")
        return ((status >> 8) & 0xff, output, measured)
    }

    /// Makes `path` `bytes` long (sparse: its new bytes are never written).
    private func makeSparse(_ path: String, bytes: off_t = Self.sparseBytes) throws {
        let descriptor = open(path, O_WRONLY)
        try #require(descriptor >= 0, "open \(path)")
        defer { close(descriptor) }
        try #require(ftruncate(descriptor, bytes) == 0, "ftruncate \(path)")
    }

    /// `berth list` of Counter and Greeter, with Greeter's `file` made sparse: the one line
    /// naming it, the whole output, and the peak memory.
    private func listWithSparse(_ file: String) throws -> (line: String, output: String, peakKiB: Int) {
        let workspace = PluginWorkspace()
        workspace.stage("counter.json")
        let folder = workspace.stage("greeter.json")
        try makeSparse(folder + "/" + file)
        let run = try runMeasured(["list", "--plugins", workspace.plugins], in: workspace.root)
        let lines = run.output.split(separator: "\n").filter { $0.contains(file) }
        #expect(lines.count == 1, "\(run.output)")
        #expect(run.output.contains("com.example.counter  1.0.0"), "the other plugin is listed: \(run.output)")
        #expect(run.peakKiB < Self.peakLimitKiB, "berth list peaked at \(run.peakKiB) KiB")
        return (String(lines.first ?? ""), run.output, run.peakKiB)
    }

    @Test("a sparse 1.5 GiB plugin.json is refused by its size in one line, and berth list stays small")
    func sparseManifest() throws {
        let (line, _, _) = try listWithSparse("plugin.json")
        #expect(line.contains("is 1610612736 bytes (1.5 GiB); a manifest may have at most 1048576 (1 MiB)"), "\(line)")
    }

    @Test("a sparse 1.5 GiB library is refused by its size in one line, not listed valid, and berth list stays small")
    func sparseLibrary() throws {
        let (line, output, _) = try listWithSparse("libGreeter.so")
        #expect(line.contains("is 1610612736 bytes (1.5 GiB); a library may have at most 268435456 (256 MiB)"), "\(line)")
        let greeterRow = output.split(separator: "\n").first { $0.hasPrefix("com.example.greeter") }.map(String.init) ?? ""
        #expect(greeterRow.contains("invalid"), "the library was listed valid: \(greeterRow)")
    }

    @Test("a 200 MiB library within the limit is validated without being held whole: listed valid, and berth list stays small")
    func largeLibraryStreamed() throws {
        let workspace = PluginWorkspace()
        let folder = workspace.stage("greeter.json")
        // Still an ELF image: its section table is where it was, and zeros follow.
        try makeSparse(folder + "/libGreeter.so", bytes: 200 << 20)
        let run = try runMeasured(["list", "--plugins", workspace.plugins], in: workspace.root)
        let greeterRow = run.output.split(separator: "\n").first { $0.hasPrefix("com.example.greeter") }.map(String.init) ?? ""
        #expect(greeterRow.contains(" valid "), "\(run.output)")
        // Held whole, the library alone would be 204,800 KiB; the process itself is about 30 MiB.
        #expect(run.peakKiB < 150 * 1024, "berth list peaked at \(run.peakKiB) KiB for a 200 MiB library")
    }
}
