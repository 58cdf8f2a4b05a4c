@_spi(Engine) import BerthCore
import Foundation
internal import CBerthSystem

/// The one thread that watches every isolated plugin's channel while the host is not
/// calling it. When a channel becomes readable (a log line, a task's post, the worker's
/// end), its owner is told once, and the channel is not watched again until the owner has
/// served it and re-arms it: nothing is read twice, and an unserved channel does not spin.
///
/// One thread for all plugins, not a Swift task per plugin: a task that blocks in `poll`
/// holds one of the few threads of Swift concurrency's pool (as many as the machine has
/// CPUs), and a handful of loaded plugins then starved every other task of the process.
/// Process-wide on purpose: one thread serves every host's channels (each owner stops its
/// own watch), and a thread per host would buy nothing.
final class ChannelWatcher: Sendable {
    static let shared = ChannelWatcher()

    /// One watched channel, until `stop`.
    struct Token: Hashable, Sendable {
        fileprivate let value: UInt64
    }

    private struct Entry {
        let descriptor: Int32
        let onReadable: @Sendable () -> Void
        var armed: Bool
    }

    private struct Watched {
        var entries: [UInt64: Entry] = [:]
        var nextToken: UInt64 = 0
    }

    private let watched = Locked(Watched())
    /// The epoll instance the thread waits in. Arming and disarming a channel change it in
    /// place, without waking the thread: a host → worker call disarms its channel before it
    /// goes and arms it after the reply, at the cost of two system calls and no thread
    /// wake (P8 in Docs/benchmarks.md). -1 if none could be made (the process is out of
    /// descriptors): nothing is watched, and a worker's lines wait for its next call.
    private let watchDescriptor = berth_watch_create()

    private init() {
        guard watchDescriptor >= 0 else { return }
        let thread = Thread { [self] in serve() }
        thread.name = "berth.channel-watcher"
        thread.start()
    }

    /// Watches `descriptor` from now on. `onReadable` runs on the watcher's thread, once per
    /// arming: it should only hand the work on (to the main actor).
    func watch(_ descriptor: Int32, onReadable: @escaping @Sendable () -> Void) -> Token {
        watched.withLock { state -> Token in
            state.nextToken += 1
            state.entries[state.nextToken] = Entry(descriptor: descriptor, onReadable: onReadable, armed: true)
            _ = berth_watch_set(watchDescriptor, descriptor, 1, 1, state.nextToken)
            return Token(value: state.nextToken)
        }
    }

    /// Watches the channel again after its owner served what was readable (or after the
    /// call that paused it): what is readable already is reported at once.
    func rearm(_ token: Token) {
        set(token, armed: true)
    }

    /// Stops reporting the channel until `rearm`: its owner is about to read it itself (a
    /// call's reply), and the thread need not wake for that.
    func pause(_ token: Token) {
        set(token, armed: false)
    }

    /// Stops watching, before the descriptor is closed. `onReadable` may still run once if
    /// the thread had already taken it; its owner checks that it is still watching.
    func stop(_ token: Token) {
        watched.withLock { state in
            guard let entry = state.entries.removeValue(forKey: token.value) else { return }
            _ = berth_watch_remove(watchDescriptor, entry.descriptor)
        }
    }

    private func set(_ token: Token, armed: Bool) {
        watched.withLock { state in
            guard let entry = state.entries[token.value], entry.armed != armed else { return }
            state.entries[token.value]?.armed = armed
            _ = berth_watch_set(watchDescriptor, entry.descriptor, 0, armed ? 1 : 0, token.value)
        }
    }

    private func serve() {
        var tokens = [UInt64](repeating: 0, count: 64)
        var ready: [@Sendable () -> Void] = []
        while true {
            let count = Int(tokens.withUnsafeMutableBufferPointer { berth_watch_wait(watchDescriptor, $0.baseAddress, Int32($0.count)) })
            guard count > 0 else { continue }
            // A report carries its watch's token: one stopped meanwhile (its descriptor
            // perhaps closed and reused) has no entry, and a paused one is not armed.
            watched.withLock { state in
                for token in tokens[0..<count] {
                    guard let entry = state.entries[token], entry.armed else { continue }
                    state.entries[token]?.armed = false
                    ready.append(entry.onReadable)
                }
            }
            for onReadable in ready { onReadable() }
            ready.removeAll(keepingCapacity: true)
        }
    }
}
