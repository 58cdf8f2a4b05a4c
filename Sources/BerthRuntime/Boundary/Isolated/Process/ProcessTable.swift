@_spi(Engine) import BerthCore
import Foundation

/// The host's view of its processes' children: the kernel's list of a thread's children
/// (`/proc/<pid>/task/<pid>/children`, CONFIG_PROC_CHILDREN), else every process's
/// `/proc/<pid>/stat`.
enum ProcessTable {
    /// The processes whose parent is `parent` (a single-threaded one, as a worker's waiter
    /// and its init are), lowest pid first.
    static func children(of parent: Int32) -> [Int32] {
        if let listed = try? String(contentsOfFile: "/proc/\(parent)/task/\(parent)/children", encoding: .utf8) {
            return listed.split(whereSeparator: \.isWhitespace).compactMap { Int32($0) }.sorted()
        }
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.compactMap { Int32($0) }.filter { parentOf($0) == parent }.sorted()
    }

    /// The pid `pid` has in the innermost PID namespace it is in (the last field of `NSpid`
    /// in its status), or nil.
    static func innermostPID(of pid: Int32) -> Int32? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8),
              let line = text.split(separator: "\n").first(where: { $0.hasPrefix("NSpid:") }) else { return nil }
        return line.split(whereSeparator: \.isWhitespace).last.flatMap { Int32($0) }
    }

    /// The parent of `pid` (field 4 of its stat, after the parenthesized command), or nil.
    static func parentOf(_ pid: Int32) -> Int32? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let commandEnd = text.lastIndex(of: ")") else { return nil }
        let fields = text[text.index(after: commandEnd)...].split(separator: " ")
        return fields.count > 1 ? Int32(fields[1]) : nil
    }
}
