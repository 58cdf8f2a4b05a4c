@_spi(Engine) import BerthRuntime
import BerthTestSupport
import Foundation
import Testing

/// The policy table (Sources/CBerthSystem/seccomp_policy.c) is what the filter loads, the
/// program the host sends is that filter, and Docs/worker-sandbox.md shows the table.
@Suite("The system-call policy")
struct SystemCallPolicyTests {
    /// The calls libseccomp's pseudo filter code gives `action` ("ALLOW", "ERRNO(38)").
    func calls(in filter: String, action: String) -> Set<String> {
        var found: Set<String> = []
        var current: String?
        for line in filter.split(separator: "\n") {
            if let start = line.range(of: "# filter for syscall \""), let end = line[start.upperBound...].firstIndex(of: "\"") {
                current = String(line[start.upperBound..<end])
            } else if line.contains("action \(action);"), let call = current {
                found.insert(call)
            }
        }
        return found
    }

    @Test("the filter allows exactly the table's calls, answers clone3 ENOSYS and traps the rest", arguments: [false, true])
    func tableIsTheFilter(network: Bool) throws {
        let filter = try SystemCallPolicy.filterText(network: network, trap: true, pid: 4242).get()
        let rows = SystemCallPolicy.rows
        let counting = rows.filter { $0.when == "always" || $0.when == "trapped" || (network && $0.when == "network") }
        let allowed = calls(in: filter, action: "ALLOW")
        // x86-64 has every call of the table (another architecture lacks some, such as open).
        #expect(allowed == Set(counting.map(\.call)),
                "only in the filter: \(allowed.subtracting(counting.map(\.call)).sorted()); only in the table: \(Set(counting.map(\.call)).subtracting(allowed).sorted())")
        #expect(calls(in: filter, action: "ERRNO(38)") == ["clone3"])
        let lines = filter.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
        let defaultAction = lines.firstIndex(of: "# default action").map { lines[$0 + 1] }
        #expect(defaultAction == "action TRAP;", "the default is \(defaultAction ?? "missing")")
        #expect(!allowed.contains("socket") || network)
        for refused in ["execve", "io_uring_setup", "keyctl", "add_key", "socketpair", "ptrace", "memfd_create", "chmod", "fchmod", "setxattr", "utimensat", "unshare", "mount"] {
            #expect(!allowed.contains(refused), "\(refused) is allowed")
        }
        // Calls about a process compare with its own pid.
        #expect(filter.contains("4242"))
    }

    @Test("the program the host sends, its pid written in, is libseccomp's own build for these pids (for any pid it means the same)", arguments: [false, true])
    func sentProgramIsTheFilter(network: Bool) throws {
        let sent = try SystemCallPolicy.program(network: network).get()
        #expect(sent.trapped == SystemCallPolicy.trapsRefusals)
        // One slot per comparison with "self" that this architecture has a call for.
        #expect(!sent.selfSlots.isEmpty)
        for pid: Int32 in [1, 2, 4242, 4_194_303] {
            let fresh = try SystemCallPolicy.freshProgram(network: network, trap: sent.trapped, pid: pid).get()
            #expect(sent.program(for: pid) == fresh, "pid \(pid)")
        }
        // Built once: the same program again, and the other variant differs (socket rows).
        #expect(try SystemCallPolicy.program(network: network).get() == sent)
        #expect(try SystemCallPolicy.program(network: !network).get().instructions != sent.instructions)
    }

    @Test("the policy's program crosses the wire whole, and a joined policy is built again")
    func programOnTheWire() throws {
        let policy = try SandboxPolicy(readPaths: ["/p"], writePaths: ["/d"], dataFolder: "/d", network: false).withSystemCallFilter(plugin: "p")
        var writer = WireWriter()
        policy.write(to: &writer)
        var reader = WireReader(writer.bytes)
        #expect(try SandboxPolicy.read(from: &reader) == policy)
        var joined = policy
        joined.join(SandboxPolicy(readPaths: [], writePaths: [], dataFolder: "/e", network: true))
        #expect(joined.systemCallFilter == nil)
        #expect(try joined.withSystemCallFilter(plugin: "p").systemCallFilter == SystemCallPolicy.program(network: true).get())
    }

    @Test("Docs/worker-sandbox.md's filter table names every call of the table and nothing else")
    func documentedTable() throws {
        let text = try String(contentsOfFile: BuildProducts.packageRoot + "/Docs/worker-sandbox.md", encoding: .utf8)
        let section = try #require(text.range(of: "## The system-call filter").map { String(text[$0.upperBound...]) })
        let table = section.split(separator: "\n").filter { $0.hasPrefix("| `") }
        var documented: Set<String> = []
        for row in table {
            let first = row.split(separator: "|", omittingEmptySubsequences: true).first ?? ""
            for name in first.split(separator: ",") {
                documented.insert(name.trimmingCharacters(in: .whitespaces).trimmingCharacters(in: CharacterSet(charactersIn: "`")))
            }
        }
        let calls = Set(SystemCallPolicy.rows.map(\.call))
        #expect(documented == calls, "only in the docs: \(documented.subtracting(calls).sorted()); only in the table: \(calls.subtracting(documented).sorted())")
    }
}
