private import CBerthEditLine
import BerthRuntime
import Foundation

/// The REPL's history: `$XDG_STATE_HOME/berth/history` (or `~/.local/state/berth/history`),
/// the last `limit` lines, kept in libedit's history list and written after every line.
/// Without libedit (EditLineLibrary) there is no history: every method does nothing.
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
        guard EditLineLibrary.isAvailable else { return }
        berth_edit_history_limit(Int32(limit))
        _ = berth_edit_history_read(path)
    }

    /// Adds a non-blank line that differs from the one before it, and saves the file (a
    /// host that is killed keeps what was typed).
    func add(_ line: String) {
        guard EditLineLibrary.isAvailable, !line.trimmingCharacters(in: .whitespaces).isEmpty, line != last else { return }
        last = line
        _ = berth_edit_history_add(line)
        save()
    }

    func save() {
        guard EditLineLibrary.isAvailable else { return }
        try? FileManager.default.createDirectory(atPath: ParentPath.of(path), withIntermediateDirectories: true)
        _ = berth_edit_history_write(path)
    }
}
