@_spi(Engine) import BerthCore
import Foundation
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

/// Why the filter could not be built (libseccomp missing, a row it refused).
package struct SystemCallPolicyError: Error, CustomStringConvertible {
    package var message: String
    package var description: String { message }
}
