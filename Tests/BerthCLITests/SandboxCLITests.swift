import BerthTestSupport
import Foundation
import Testing

/// The sandbox as the CLI shows it: a refused system call in `events`, each worker's
/// processor time in `status` (Docs/security.md).
@Suite("The sandbox in the CLI", .blocking)
struct SandboxCLITests {
    @Test("events names a plugin's refused execve, and status shows its worker's processor time and its use against its limits")
    func deniedAndProcessorTime() throws {
        let workspace = PluginWorkspace()
        let folder = workspace.plugins + "/org.berth.attacker"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: BuildProducts.library("libBerthAttacker.so"), toPath: folder + "/libBerthAttacker.so")
        workspace.write(manifest: [
            "id": "org.berth.attacker", "name": "Attacker", "version": "1.0.0", "abi": "1.0", "library": "libBerthAttacker.so",
            "entry": "berth_attacker_entry_v1", "runtime": "c", "routes": ["attack"], "isolation": "process", "capabilities": [] as [String],
            "exports": [["symbol": "attack_execve", "params": ["string"], "returns": "int32"]],
        ], in: folder)
        // The sandbox is the subject: the manifest's worker, whatever the CI's BERTH_ISOLATION
        // pass says (in process, the attacker's execve would replace the host).
        let host = try RunningHost(workspace, arguments: ["--isolation", "manifest"])
        try host.wait(for: "org.berth.attacker")
        let reply = try host.command(["call", "org.berth.attacker", "attack_execve", "/bin/true"])
        // The plugin returns execve's errno: EPERM is the filter's answer (Landlock's would be EACCES).
        #expect(reply.split(separator: "\n").contains { $0.hasSuffix("attack_execve → \(EPERM)") }, "\(reply)")
        try host.wait(for: "org.berth.attacker: execve refused by the system-call filter: EPERM", in: ["events"], timeout: 60)
        let status = try host.command(["status"])
        #expect(status.contains(#/org\.berth\.attacker pid \d+ cpu \d+\.\d\d s/#), "\(status)")
        #expect(status.contains(#/memory \d+\.\d of 1024 MiB · threads \d+ of 256 · cpu ≤ 1\.00 cores · disk ≤ 1024 MiB per file/#), "\(status)")
    }
}
