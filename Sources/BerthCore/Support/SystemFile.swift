internal import Glibc
internal import CBerthSystem

/// Reading a small text file (`/proc`, cgroup files) with read(2): what both sides of the
/// seam need of files, without Foundation (a worker links none).
package enum SystemFile {
    /// The whole file at `path` as UTF-8 text (malformed bytes replaced); nil when it cannot
    /// be opened or read.
    package static func text(_ path: String) -> String? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            guard count >= 0 else { return nil }
            if count == 0 { break }
            bytes.append(contentsOf: chunk[0..<count])
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Where the symbolic link at `path` points (readlink(2)); nil when it is none.
    package static func linkTarget(_ path: String) -> String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = readlink(path, &buffer, buffer.count - 1)
        guard count >= 0 else { return nil }
        return String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Writes all of `bytes` to `descriptor` (a report to standard error), retrying short
    /// writes and EINTR; gives up silently on any other error.
    package static func write(_ bytes: [UInt8], to descriptor: Int32) {
        var offset = 0
        while offset < bytes.count {
            let count = bytes[offset...].withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { return }
            offset += count
        }
    }
}

/// A thread of its own for a long-lived loop (the task pool's threads, a worker's readers),
/// started with pthread_create and detached.
package enum DetachedThread {
    /// Starts `body` on a new thread named `name` (at most 15 bytes kept, the kernel's limit).
    package static func start(name: String, _ body: @escaping @Sendable () -> Void) {
        let box = Unmanaged.passRetained(ThreadStart(name: name, body: body)).toOpaque()
        var thread = pthread_t()
        let status = pthread_create(&thread, nil, { context in
            let start = Unmanaged<ThreadStart>.fromOpaque(context!).takeRetainedValue()
            _ = berth_set_thread_name(start.name)
            start.body()
            return nil
        }, box)
        guard status == 0 else {
            Unmanaged<ThreadStart>.fromOpaque(box).release()
            fatalError("pthread_create of thread '\(name)' failed with status \(status)")
        }
        pthread_detach(thread)
    }

    private final class ThreadStart {
        let name: String
        let body: @Sendable () -> Void

        init(name: String, body: @escaping @Sendable () -> Void) {
            self.name = name
            self.body = body
        }
    }
}
