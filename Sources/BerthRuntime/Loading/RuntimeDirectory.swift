@_spi(Engine) import BerthCore
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
    /// Per plugin, its library's validated bytes in sealed memory, from which each
    /// generation's shadow copy is written while the validated digest stays the same.
    private let sealedLibraries = Locked(SealedLibraries())
    /// Shadow copies made ahead, off the main actor (`prepareShadowCopy`), by plugin id.
    private let preparedCopies = Locked<[String: PreparedCopy]>([:])

    /// A shadow copy written ahead for one generation of one digest.
    private struct PreparedCopy: Sendable {
        let generation: Int
        let digest: String
        let path: String
    }

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
    /// (`<id>/gen-<n>-<library>`), written from the library's validated bytes in sealed
    /// memory (`SealedLibrary`). Those are made at the first load of each digest: from the
    /// bytes validation kept (a small library), else from the file, hashed as it is read and
    /// refused unless it is the validated digest. The file may have changed since it was
    /// validated; only bytes checked are ever loaded (in process or by a worker), and a
    /// reload of an unchanged library neither reads nor hashes it again.
    func verifiedShadowCopy(of plugin: ValidatedPlugin, generation: Int) throws(LoaderError) -> String {
        let id = plugin.manifest.id
        if let ready = preparedCopies.withLock({ $0.removeValue(forKey: id) }) {
            if ready.generation == generation, ready.digest == plugin.librarySHA256 { return ready.path }
            discard(shadowCopy: ready.path)
        }
        let folder = folder(of: id)
        // The file name by hand: NSString's path methods bridge the string both ways. The
        // library path is a resolved one: absolute, no trailing slash.
        let libraryPath = plugin.libraryPath
        let fileName = libraryPath.utf8.lastIndex(of: UInt8(ascii: "/")).map { String(libraryPath[libraryPath.utf8.index(after: $0)...]) } ?? libraryPath
        let target = folder + "/gen-\(generation)-" + fileName
        let sealed: SealedLibrary?
        do {
            sealed = try sealedLibrary(of: plugin)
            if let sealed { try writeMakingFolder(sealed, to: target, folder: folder) }
        } catch {
            discard(shadowCopy: target)
            let detail = error.path == folder ? "cannot create the plugin's runtime folder" : "cannot copy \(libraryPath) to \(target)"
            throw LoaderError(.copyFailed, plugin: id, path: error.path, systemError: error.systemError, detail: detail)
        }
        guard sealed != nil else {
            throw LoaderError(.changedSinceValidation, plugin: id, path: plugin.libraryPath)
        }
        return target
    }

    /// Writes generation `generation`'s shadow copy now, on the calling thread (a reload's,
    /// off the main actor: it may read and hash the whole library), for the
    /// `verifiedShadowCopy` of that generation to take. A failure is left for that call to
    /// meet and report.
    func prepareShadowCopy(of plugin: ValidatedPlugin, generation: Int) {
        guard let path = try? verifiedShadowCopy(of: plugin, generation: generation) else { return }
        let ready = PreparedCopy(generation: generation, digest: plugin.librarySHA256, path: path)
        let earlier = preparedCopies.withLock { $0.updateValue(ready, forKey: plugin.manifest.id) }
        if let earlier, earlier.path != path { discard(shadowCopy: earlier.path) }
    }

    /// `plugin`'s validated bytes in sealed memory: kept from an earlier load of the same
    /// digest, or made now. Nil when the library no longer holds the validated bytes.
    private func sealedLibrary(of plugin: ValidatedPlugin) throws(HashingCopy.Failure) -> SealedLibrary? {
        let id = plugin.manifest.id
        if let kept = sealedLibraries.withLock({ $0.take(id, digest: plugin.librarySHA256) }) { return kept }
        // Made outside the lock: hashing a large library must not hold up other plugins' loads.
        guard let made = try SealedLibrary.make(of: plugin) else { return nil }
        sealedLibraries.withLock { $0.keep(made, for: id) }
        return made
    }

    /// Writes `sealed` to `target`; the plugin's folder is made on its first copy (and again
    /// if someone removed it), not tried on every reload.
    private func writeMakingFolder(_ sealed: SealedLibrary, to target: String, folder: String) throws(HashingCopy.Failure) {
        do {
            try sealed.write(to: target)
        } catch where error.code == ENOENT && error.path == target {
            if mkdir(folder, 0o700) != 0 && errno != EEXIST { throw HashingCopy.Failure(path: folder) }
            try sealed.write(to: target)
        }
    }

    /// Deletes a shadow copy once its image is closed or retired (a mapping outlives its file).
    func discard(shadowCopy: String) {
        unlink(shadowCopy)
    }

    /// Removes the whole folder (host exit), and lets the sealed copies go.
    package func remove() {
        sealedLibraries.withLock { $0 = SealedLibraries() }
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
