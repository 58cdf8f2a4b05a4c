import Foundation

/// The host's view of its processes' parents, from `/proc/<pid>/stat` (Linux has no cheap
/// list of a process's children without CONFIG_PROC_CHILDREN).
enum ProcessTable {
    /// The processes whose parent is `parent`, lowest pid first. Reads every process's
    /// `stat` once: for an occasional lookup (`WorkerProcess.pluginPID` caches its answer).
    static func children(of parent: Int32) -> [Int32] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.compactMap { Int32($0) }.filter { parentOf($0) == parent }.sorted()
    }

    /// The parent of `pid` (field 4 of its stat, after the parenthesized command), or nil.
    static func parentOf(_ pid: Int32) -> Int32? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let commandEnd = text.lastIndex(of: ")") else { return nil }
        let fields = text[text.index(after: commandEnd)...].split(separator: " ")
        return fields.count > 1 ? Int32(fields[1]) : nil
    }
}
