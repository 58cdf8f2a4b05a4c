private import CEditLine
import BerthRuntime
import Foundation

/// The REPL's history: `$XDG_STATE_HOME/berth/history` (or `~/.local/state/berth/history`),
/// the last `limit` lines, kept in libedit's history list and written after every line.
@MainActor
final class CommandHistory {
    let path: String
    let limit: Int
    private var last: String?

    init(path: String = CommandHistory.defaultPath(), limit: Int = 1_000) {
        self.path = path
        self.limit = limit
    }

    static func defaultPath() -> String {
        (Berth.Run.defaultStateDirectory() as NSString).appendingPathComponent("history")
    }

    func load() {
        stifle_history(Int32(limit))
        _ = read_history(path)
    }

    /// Adds a non-blank line that differs from the one before it, and saves the file (a
    /// host that is killed keeps what was typed).
    func add(_ line: String) {
        guard !line.trimmingCharacters(in: .whitespaces).isEmpty, line != last else { return }
        last = line
        _ = add_history(line)
        save()
    }

    func save() {
        try? FileManager.default.createDirectory(atPath: ParentPath.of(path), withIntermediateDirectories: true)
        _ = write_history(path)
    }
}
