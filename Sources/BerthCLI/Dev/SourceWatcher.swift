import BerthRuntime
import Foundation

/// Watches a plugin package's source folder, and every folder below it, with inotify. A
/// burst of events (an editor writes a temporary file, renames it, touches attributes) is
/// one change; files that are not sources (editor droppings, build output) are no change.
/// The watcher reports from its own thread and the dev loop waits on another.
final class SourceWatcher: Sendable {
    let root: String
    private let watcher: DirectoryWatcher
    /// When the oldest change not yet acted on was seen, and the newest.
    private struct Burst {
        var firstChange: ContinuousClock.Instant?
        var lastChange: ContinuousClock.Instant?
    }
    private let burst = LockedCondition(Burst())

    init(root: String) throws(WatchError) {
        self.root = root
        watcher = try DirectoryWatcher()
        for folder in Self.folders(under: root) { try watcher.watch(folder) }
    }

    func start() {
        watcher.start { [self] folder, name in
            let path = (folder as NSString).appendingPathComponent(name)
            var isFolder: ObjCBool = false
            if FileManager.default.fileExists(atPath: path, isDirectory: &isFolder), isFolder.boolValue {
                for folder in Self.folders(under: path) { try? watcher.watch(folder) }
                return
            }
            guard Self.isSourceChange(name) else { return }
            burst.withLock { burst in
                let now = ContinuousClock.now
                if burst.firstChange == nil { burst.firstChange = now }
                burst.lastChange = now
            }
            burst.broadcast()
        }
    }

    func stop() { watcher.stop() }

    /// Whether a change was seen that `waitForChange` has not returned yet.
    var hasPendingChange: Bool { burst.withLock { $0.lastChange != nil } }

    /// Blocks until a source changed and then stayed quiet for `quiet`; returns when the
    /// first change of that burst was seen (the save the user is waiting on).
    func waitForChange(quiet: Duration) -> ContinuousClock.Instant {
        burst.wait { burst, _ in
            guard let first = burst.firstChange, let last = burst.lastChange else { return .wait }
            let settled = last + quiet
            guard ContinuousClock.now >= settled else { return .waitUntil(settled) }
            burst = Burst()
            return .finish(first)
        }
    }

    /// Each source file under `root` (by path) with its size and modification time: equal
    /// snapshots mean a change event was one the last build already read.
    func snapshot() -> [String: [Int]] {
        var files: [String: [Int]] = [:]
        guard let walker = FileManager.default.enumerator(atPath: root) else { return files }
        while let relative = walker.nextObject() as? String {
            let name = (relative as NSString).lastPathComponent
            guard Self.isSourceChange(name) else { continue }
            var info = stat()
            let path = (root as NSString).appendingPathComponent(relative)
            guard stat(path, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { continue }
            files[relative] = [Int(info.st_size), info.st_mtim.tv_sec, info.st_mtim.tv_nsec]
        }
        return files
    }

    /// `root` and every folder below it.
    private static func folders(under root: String) -> [String] {
        var folders = [root]
        guard let walker = FileManager.default.enumerator(atPath: root) else { return folders }
        while let relative = walker.nextObject() as? String {
            var isFolder: ObjCBool = false
            let path = (root as NSString).appendingPathComponent(relative)
            if FileManager.default.fileExists(atPath: path, isDirectory: &isFolder), isFolder.boolValue { folders.append(path) }
        }
        return folders
    }

    /// The kinds of file a plugin is made of. Anything else (editor droppings such as
    /// `.swp` or `4913`, a library `make` just wrote) is not a change to rebuild for.
    private static let sourceExtensions: Set<String> = ["swift", "c", "h", "cc", "cpp", "m", "json"]

    private static func isSourceChange(_ name: String) -> Bool {
        !name.hasPrefix(".") && sourceExtensions.contains((name as NSString).pathExtension)
    }

    static func seconds(_ duration: Duration) -> Double {
        let (seconds, attoseconds) = duration.components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}
