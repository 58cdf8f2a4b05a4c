import Foundation
import Synchronization

/// Hosts made so far in this process: each gets its own runtime folder.
private let hostsCreated = Atomic<Int>(0)

/// The host's per-process scratch folder: shadow copies of loaded libraries live here.
///
/// Each generation of a plugin is loaded from its own copy (`<id>/gen-<n>-<library>`), so
/// the dynamic linker sees a new path and gives the new code fresh globals, and a build
/// overwriting the original file can never change an image that is already mapped. The
/// folder is `$XDG_RUNTIME_DIR/berth/<pid>.<n>` (else `/tmp/berth-<uid>/<pid>.<n>`, `n`
/// counting hosts in this process), removed by `remove()` when the host exits; folders
/// left by processes that died are swept on start.
package final class RuntimeDirectory: Sendable {
    /// The folder's path.
    package let path: String

    /// Creates the folder for this process, sweeping folders of processes that are gone.
    package init(base: String? = nil) throws(LoaderError) {
        let parent = base ?? Self.defaultParent()
        let number = hostsCreated.add(1, ordering: .relaxed).newValue
        let path = (parent as NSString).appendingPathComponent("\(getpid()).\(number)")
        do {
            try FileManager.default.createDirectory(atPath: parent, withIntermediateDirectories: true,
                                                    attributes: [.posixPermissions: 0o700])
        } catch {
            throw LoaderError(.copyFailed, plugin: "host", path: parent, systemError: error.localizedDescription, detail: "cannot create the runtime folder")
        }
        try Self.checkPrivate(parent)
        do {
            Self.sweepDeadHosts(in: parent)
            try? FileManager.default.removeItem(atPath: path)
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true,
                                                    attributes: [.posixPermissions: 0o700])
        } catch {
            throw LoaderError(.copyFailed, plugin: "host", path: path, systemError: error.localizedDescription, detail: "cannot create the runtime folder")
        }
        self.path = path
    }

    /// The folder of plugin `id`'s shadow copies.
    func folder(of id: String) -> String {
        (path as NSString).appendingPathComponent(id)
    }

    /// A shadow copy of `plugin`'s library for generation `generation`
    /// (`<id>/gen-<n>-<library>`), checked as it is written against what was validated: a
    /// small library byte for byte against the bytes validation kept, a large one by its
    /// SHA-256. The file may have changed since it was validated, and only the bytes checked
    /// are ever loaded (in process or by a worker). The library is read once.
    func verifiedShadowCopy(of plugin: ValidatedPlugin, generation: Int) throws(LoaderError) -> String {
        let id = plugin.manifest.id
        let folder = folder(of: id)
        // The file name by hand: NSString's path methods bridge the string both ways. The
        // library path is a resolved one: absolute, no trailing slash.
        let libraryPath = plugin.libraryPath
        let fileName = libraryPath.utf8.lastIndex(of: UInt8(ascii: "/")).map { String(libraryPath[libraryPath.utf8.index(after: $0)...]) } ?? libraryPath
        let target = folder + "/gen-\(generation)-" + fileName
        let matches: Bool
        do {
            matches = try copyMakingFolder(to: target, folder: folder) { () throws(HashingCopy.Failure) in
                // The copy holds the validated bytes: compared with them when validation kept
                // them (a small library), else hashed as it is written.
                if let expected = plugin.libraryBytes { return try HashingCopy.copy(from: libraryPath, to: target, matching: expected) }
                return try HashingCopy.copy(from: libraryPath, to: target) == plugin.librarySHA256
            }
        } catch {
            discard(shadowCopy: target)
            let detail = error.path == folder ? "cannot create the plugin's runtime folder" : "cannot copy \(libraryPath) to \(target)"
            throw LoaderError(.copyFailed, plugin: id, path: error.path, systemError: error.systemError, detail: detail)
        }
        guard matches else {
            discard(shadowCopy: target)
            throw LoaderError(.changedSinceValidation, plugin: id, path: plugin.libraryPath)
        }
        return target
    }

    /// Runs `copy`, the checked copy; the plugin's folder is made on its first copy (and again if
    /// someone removed it), not tried on every reload.
    private func copyMakingFolder(
        to target: String, folder: String, copy: () throws(HashingCopy.Failure) -> Bool
    ) throws(HashingCopy.Failure) -> Bool {
        do {
            return try copy()
        } catch where error.code == ENOENT && error.path == target {
            if mkdir(folder, 0o700) != 0 && errno != EEXIST { throw HashingCopy.Failure(path: folder) }
            return try copy()
        }
    }

    /// Deletes a shadow copy once its image is closed or retired (a mapping outlives its file).
    func discard(shadowCopy: String) {
        unlink(shadowCopy)
    }

    /// Removes the whole folder (host exit).
    package func remove() {
        try? FileManager.default.removeItem(atPath: path)
    }

    /// The parent must be a real folder (not a symlink) owned by this user and closed to
    /// others: in a shared /tmp another user could otherwise swap a shadow copy before it
    /// is opened.
    private static func checkPrivate(_ folder: String) throws(LoaderError) {
        var info = stat()
        guard lstat(folder, &info) == 0 else {
            throw LoaderError(.copyFailed, plugin: folder, "cannot inspect the runtime folder: \(String(cString: strerror(errno)))")
        }
        guard (info.st_mode & S_IFMT) == S_IFDIR else {
            throw LoaderError(.copyFailed, plugin: folder, "the runtime folder is not a plain folder (a symlink?); refusing to use it")
        }
        guard info.st_uid == getuid() else {
            throw LoaderError(.copyFailed, plugin: folder, "the runtime folder belongs to uid \(info.st_uid), not to this user (\(getuid())); refusing to use it")
        }
        if info.st_mode & 0o077 != 0 {
            guard chmod(folder, 0o700) == 0 else {
                throw LoaderError(.copyFailed, plugin: folder, "the runtime folder is open to other users and cannot be closed: \(String(cString: strerror(errno)))")
            }
        }
    }

    private static func defaultParent() -> String {
        if let runtime = ProcessInfo.processInfo.environment["XDG_RUNTIME_DIR"], !runtime.isEmpty,
           access(runtime, W_OK) == 0 {
            return (runtime as NSString).appendingPathComponent("berth")
        }
        return "/tmp/berth-\(getuid())"
    }

    /// Removes `<parent>/<pid>.<n>` folders whose process no longer exists.
    private static func sweepDeadHosts(in parent: String) {
        guard let entries = try? FileManager.default.contentsOfDirectory(atPath: parent) else { return }
        for entry in entries {
            guard let pidText = entry.split(separator: ".").first, let pid = Int32(pidText), pid != getpid() else { continue }
            if kill(pid, 0) != 0 && errno == ESRCH {
                try? FileManager.default.removeItem(atPath: (parent as NSString).appendingPathComponent(entry))
            }
        }
    }
}
