@_spi(Engine) import BerthCore
import Foundation

/// What validation keeps between runs, so a reload pays only for what changed: the decoded
/// manifest per manifest file (decoded again only when its bytes change), and per library
/// the digest and image checks (redone only when the file's identity changes: device,
/// inode, size, modification and status-change times; any write changes the last).
///
/// Skipping a read here never lets unchecked bytes load: shadow copies are written from
/// sealed memory that holds the validated bytes (`SealedLibrary`), sealed from the bytes
/// kept here or from a file hashed as it is read and refused unless its digest is the
/// validated one.
///
/// Process-wide on purpose: it is keyed by file identity, not by host, so hosts (and
/// `berth validate` runs) in one process share what is still true of a file.
enum ValidationCache {
    struct Manifest {
        let data: Data
        let manifest: PluginManifest?
        let problems: [PluginProblem]
        let digest: String
    }

    /// A library's checks, valid for one file identity and one manifest.
    struct Library {
        let identity: FileIdentity?
        let manifestData: Data
        let size: Int
        let digest: String
        let problems: [PluginProblem]
        /// The bytes that were hashed, kept for a library up to `keptBytesLimit`: its sealed
        /// copy (`SealedLibrary`) is then made from them, without reading the file again.
        var bytes: [UInt8]?

        /// The checks of the library read as `read` (nil: streamed, never held whole), whose
        /// bytes are kept when it is small.
        init(identity: FileIdentity?, manifestData: Data, size: Int, digest: String, problems: [PluginProblem], read: [UInt8]?) {
            self.identity = identity
            self.manifestData = manifestData
            self.size = size
            self.digest = digest
            self.problems = problems
            bytes = read.flatMap { $0.count <= keptBytesLimit ? $0 : nil }
        }
    }

    /// The largest library whose bytes are kept (a C plugin is tens of kilobytes; a Swift
    /// plugin, a megabyte or more, is read and hashed again when it is sealed).
    static let keptBytesLimit = 256 * 1024
    /// The most library bytes the cache keeps in all; beyond it the longest-kept entries let
    /// theirs go (their next copy is hashed). A host that validates many folders over its
    /// life (a long `berth dev`, a test run) stays bounded.
    static let keptTotalLimit = 16 * 1024 * 1024

    /// The fields of `stat` that change when the file is replaced or written.
    struct FileIdentity: Equatable {
        let device: UInt64
        let inode: UInt64
        let size: Int64
        let modified: timespec
        let changed: timespec

        init?(path: String) {
            var info = stat()
            guard stat(path, &info) == 0 else { return nil }
            self.init(info)
        }

        init(_ info: stat) {
            device = UInt64(info.st_dev)
            inode = UInt64(info.st_ino)
            size = Int64(info.st_size)
            modified = info.st_mtim
            changed = info.st_ctim
        }

        /// Whether `info` describes the same file (device and inode), changed or not.
        func isSameFile(as info: stat) -> Bool {
            device == UInt64(info.st_dev) && inode == UInt64(info.st_ino)
        }

        static func == (left: FileIdentity, right: FileIdentity) -> Bool {
            left.device == right.device && left.inode == right.inode && left.size == right.size
                && left.modified.tv_sec == right.modified.tv_sec && left.modified.tv_nsec == right.modified.tv_nsec
                && left.changed.tv_sec == right.changed.tv_sec && left.changed.tv_nsec == right.changed.tv_nsec
        }
    }

    private static let manifests = Locked<[String: Manifest]>([:])
    private struct Libraries {
        var entries: [String: Library] = [:]
        /// Paths whose entry keeps its bytes, the longest-kept first, and those bytes' total.
        var kept: [String] = []
        var keptTotal = 0
    }

    private static let libraries = Locked(Libraries())

    /// The manifest decoded from `data`, decoding only when `path`'s bytes changed.
    static func manifest(_ data: Data, path: String) -> Manifest {
        if let cached = manifests.withLock({ $0[path] }), cached.data == data { return cached }
        let (manifest, problems) = PluginManifest.decode(data, path: path)
        let entry = Manifest(data: data, manifest: manifest, problems: problems, digest: HexDigest.sha256(data))
        manifests.withLock { $0[path] = entry }
        return entry
    }

    static func library(at path: String, identity: FileIdentity, manifestData: Data) -> Library? {
        guard let cached = libraries.withLock({ $0.entries[path] }), cached.identity == identity, cached.manifestData == manifestData else { return nil }
        return cached
    }

    static func remember(_ library: Library, at path: String) {
        libraries.withLock { state in
            if let replaced = state.entries[path]?.bytes {
                state.keptTotal -= replaced.count
                state.kept.removeAll { $0 == path }
            }
            state.entries[path] = library
            guard let bytes = library.bytes else { return }
            state.kept.append(path)
            state.keptTotal += bytes.count
            while state.keptTotal > keptTotalLimit, !state.kept.isEmpty {
                let oldest = state.kept.removeFirst()
                state.keptTotal -= state.entries[oldest]?.bytes?.count ?? 0
                state.entries[oldest]?.bytes = nil
            }
        }
    }

    /// The entry for `path`, whatever its identity (tests).
    static func remembered(at path: String) -> Library? { libraries.withLock { $0.entries[path] } }

    /// The bytes the cache keeps in all (tests).
    static var keptTotal: Int { libraries.withLock { $0.keptTotal } }
}
