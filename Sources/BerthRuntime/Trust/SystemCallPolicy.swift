@_spi(Engine) import BerthCore
import Foundation
import Synchronization
private import CBerthSystem

/// The worker's system-call policy as Swift sees it: the rows of the one table in
/// `Sources/CBerthSystem/seccomp_policy.c`, and the filter libseccomp builds from them
/// (Docs/worker-sandbox.md). `package`: the tests compare the two, and the docs with both.
package enum SystemCallPolicy {
    /// One row: `call` is allowed (or, for clone3, answered ENOSYS) when every comparison holds.
    package struct Row: Sendable, Equatable {
        /// The system call's name.
        package var call: String
        /// When it counts: "always", "network", "enosys", "trapped", "untrapped".
        package var when: String
        /// Its comparisons, as "arg1 & 0xf == 1" ("self" for the worker's own pid).
        package var comparisons: [String]
    }

    /// Every row of the table, in its order.
    package static var rows: [Row] {
        (0..<berth_policy_rule_count()).compactMap { index in
            guard let rule = berth_policy_rule_at(index)?.pointee else { return nil }
            let kinds = ["always", "network", "enosys", "trapped", "untrapped"]
            let compares = withUnsafeBytes(of: rule.compare) { Array($0.bindMemory(to: berth_policy_compare.self)) }
            return Row(call: String(cString: rule.name), when: kinds[Int(rule.when)],
                       comparisons: compares.prefix(Int(rule.count)).map { compare in
                           let value = compare.value == BERTH_POLICY_SELF ? "self" : "0x" + String(compare.value, radix: 16)
                           return "arg\(compare.argument) & 0x\(String(compare.mask, radix: 16)) == \(value)"
                       })
        }
    }

    /// The filter a worker with `network` would load (with the reporting trap when `trap`),
    /// for pid `pid`, as libseccomp's pseudo filter code; nil with the reason when it cannot be built.
    package static func filterText(network: Bool, trap: Bool, pid: Int32) -> Result<String, SystemCallPolicyError> {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("berth-filter-\(getpid())-\(UUID().uuidString)").path
        let descriptor = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { return .failure(SystemCallPolicyError(message: "cannot open \(path): \(String(cString: strerror(errno)))")) }
        defer {
            close(descriptor)
            unlink(path)
        }
        var message = [CChar](repeating: 0, count: 256)
        guard berth_seccomp_export(network ? 1 : 0, trap ? 1 : 0, pid, descriptor, &message, message.count) == 0 else {
            return .failure(SystemCallPolicyError(message: String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)))
        }
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
            return .failure(SystemCallPolicyError(message: "cannot read \(path)"))
        }
        return .success(text)
    }
}

extension SystemCallPolicy {
    /// Whether refused calls trap and are reported (`denied`): x86-64, where the worker's
    /// SIGSYS handler can answer them (seccomp_trap.c); elsewhere the filter answers EPERM.
    package static var trapsRefusals: Bool {
        #if arch(x86_64)
        true
        #else
        false
        #endif
    }

    /// The programs built so far, by `network`: libseccomp builds each once per host.
    private static let built = Mutex<[Bool: SystemCallFilterProgram]>([:])

    /// The filter a worker with `network` loads, its pid left out (Docs/worker-sandbox.md):
    /// built by libseccomp on first use, then the same program for every worker.
    package static func program(network: Bool) -> Result<SystemCallFilterProgram, SystemCallPolicyError> {
        if let known = built.withLock({ $0[network] }) { return .success(known) }
        var template = berth_filter_template()
        var message = [CChar](repeating: 0, count: 256)
        guard berth_seccomp_template(network ? 1 : 0, trapsRefusals ? 1 : 0, &template, &message, message.count) == 0 else {
            return .failure(SystemCallPolicyError(message: String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)))
        }
        defer { berth_seccomp_template_free(&template) }
        let program = SystemCallFilterProgram(instructions: Array(UnsafeBufferPointer(start: template.instructions, count: template.count)),
                                              selfSlots: Array(UnsafeBufferPointer(start: template.self_slots, count: template.slot_count)),
                                              trapped: trapsRefusals)
        built.withLock { $0[network] = program }
        return .success(program)
    }

    /// The program libseccomp builds for `pid` afresh, packed as a template's instructions:
    /// what `program(network:).program(for: pid)` must equal.
    package static func freshProgram(network: Bool, trap: Bool, pid: Int32) -> Result<[UInt64], SystemCallPolicyError> {
        var instructions = [UInt64](repeating: 0, count: 4096)
        var count = instructions.count
        var message = [CChar](repeating: 0, count: 256)
        guard berth_seccomp_program(network ? 1 : 0, trap ? 1 : 0, pid, &instructions, &count, &message, message.count) == 0 else {
            return .failure(SystemCallPolicyError(message: String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)))
        }
        return .success(Array(instructions.prefix(count)))
    }
}

extension SandboxPolicy {
    /// This policy with the system-call filter its worker loads (`SystemCallPolicy.program`);
    /// a load fails in one line when libseccomp cannot build it.
    package func withSystemCallFilter(plugin: String) throws(LoaderError) -> SandboxPolicy {
        var policy = self
        switch SystemCallPolicy.program(network: network) {
        case .success(let program): policy.systemCallFilter = program
        case .failure(let error): throw LoaderError(.workerFailed, plugin: plugin, detail: "cannot build the system-call filter: \(error.message)")
        }
        return policy
    }
}

/// Why the filter could not be built (libseccomp missing, a row it refused).
package struct SystemCallPolicyError: Error, CustomStringConvertible {
    package var message: String
    package var description: String { message }
}
