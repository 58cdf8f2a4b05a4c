@_spi(Engine) import BerthCore
import Foundation
#if canImport(Glibc)
internal import Glibc
#endif

/// Watches folders with inotify and reports each change (folder, file name) from its own
/// thread. It reports; deciding what a change means is the host's job.
///
/// The descriptor is closed only in `deinit`, after the reader thread (which holds the
/// watcher) has ended.
/// `package`: a helper the CLI shares; not part of the embedding API.
package final class DirectoryWatcher: Sendable {
    private let descriptor: Int32
    /// The folders watched, by inotify watch descriptor, and whether `stop` was called.
    private struct Watches {
        var paths: [Int32: String] = [:]
        var stopped = false
    }
    private let watches = Locked(Watches())

    /// What changes are reported: files written and closed, created, deleted, renamed in
    /// or out (editors and build tools that replace a file by rename), and the folder
    /// itself going away.
    private static let mask: UInt32 = UInt32(IN_CREATE | IN_DELETE | IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM | IN_MODIFY | IN_DELETE_SELF | IN_ATTRIB)

    package init() throws(WatchError) {
        descriptor = inotify_init1(Int32(IN_CLOEXEC))
        guard descriptor >= 0 else {
            throw WatchError(.cannotStart, path: nil, systemError: String(cString: strerror(errno)))
        }
    }

    deinit {
        stop()
        close(descriptor)
    }

    /// Adds a folder; watching one twice is harmless.
    package func watch(_ path: String) throws(WatchError) {
        let watch = inotify_add_watch(descriptor, path, Self.mask)
        guard watch >= 0 else {
            throw WatchError(.cannotWatch, path: path, systemError: String(cString: strerror(errno)))
        }
        watches.withLock { $0.paths[watch] = path }
    }

    package var watchedPaths: Set<String> { watches.withLock { Set($0.paths.values) } }

    /// Starts the reader thread; `onChange(folder, name)` runs on it for every event.
    package func start(onChange: @escaping @Sendable (String, String) -> Void) {
        let thread = Thread { [self] in readLoop(onChange) }
        thread.name = "berth.watch"
        thread.start()
    }

    package func stop() {
        watches.withLock { $0.stopped = true }
    }

    private func readLoop(_ onChange: @Sendable (String, String) -> Void) {
        let capacity = 64 * 1024
        let buffer = UnsafeMutableRawPointer.allocate(byteCount: capacity, alignment: 8)
        defer { buffer.deallocate() }
        while !watches.withLock({ $0.stopped }) {
            var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, 200) > 0 else { continue }
            let count = read(descriptor, buffer, capacity)
            guard count > 0 else { continue }
            var offset = 0
            let headerSize = MemoryLayout<inotify_event>.size
            while offset + headerSize <= count {
                let event = buffer.load(fromByteOffset: offset, as: inotify_event.self)
                var name = ""
                if event.len > 0 {
                    let bytes = UnsafeRawBufferPointer(start: buffer + offset + headerSize, count: Int(event.len))
                    name = String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
                }
                if let folder = watches.withLock({ $0.paths[event.wd] }) {
                    if event.mask & UInt32(IN_IGNORED) != 0 {
                        _ = watches.withLock { $0.paths.removeValue(forKey: event.wd) }
                    }
                    onChange(folder, name)
                }
                offset += headerSize + Int(event.len)
            }
        }
    }
}

/// Why watching could not start or a folder could not be watched.
public struct WatchError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Which step failed.
    public enum Code: String, Sendable {
        /// inotify itself could not start.
        case cannotStart
        /// A folder could not be added to the watch.
        case cannotWatch
    }

    /// Which step failed.
    public var code: Code
    /// The folder involved, if any.
    public var path: String?
    /// The errno text.
    public var systemError: String

    /// An error of `code` about `path`, with the system's own text.
    public init(_ code: Code, path: String?, systemError: String) {
        self.code = code
        self.path = path
        self.systemError = systemError
    }

    /// The explanation a user reads.
    public var message: String {
        switch code {
        case .cannotStart: "inotify_init1 failed: \(systemError)"
        case .cannotWatch: "cannot watch \(path ?? "?"): \(systemError)"
        }
    }

    /// The message.
    public var description: String { message }
}
