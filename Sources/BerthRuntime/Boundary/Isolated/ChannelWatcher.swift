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
    /// Written to when the armed set changes, so the thread's `poll` starts over with it
    /// (-1 if no eventfd could be made: the thread then looks every 50 ms).
    private let wakeDescriptor = berth_wake_descriptor()

    private init() {
        let thread = Thread { [self] in serve() }
        thread.name = "berth.channel-watcher"
        thread.start()
    }

    /// Watches `descriptor` from now on. `onReadable` runs on the watcher's thread, once per
    /// arming: it should only hand the work on (to the main actor).
    func watch(_ descriptor: Int32, onReadable: @escaping @Sendable () -> Void) -> Token {
        let token = watched.withLock { state -> Token in
            state.nextToken += 1
            state.entries[state.nextToken] = Entry(descriptor: descriptor, onReadable: onReadable, armed: true)
            return Token(value: state.nextToken)
        }
        wake()
        return token
    }

    /// Watches the channel again after its owner served what was readable.
    func rearm(_ token: Token) {
        let changed = watched.withLock { state -> Bool in
            guard let entry = state.entries[token.value], !entry.armed else { return false }
            state.entries[token.value]?.armed = true
            return true
        }
        if changed { wake() }
    }

    /// Stops watching, before the descriptor is closed. `onReadable` may still run once if
    /// the thread had already taken it; its owner checks that it is still watching.
    func stop(_ token: Token) {
        let removed = watched.withLock { $0.entries.removeValue(forKey: token.value) != nil }
        if removed { wake() }
    }

    private func wake() {
        guard wakeDescriptor >= 0 else { return }
        var one: UInt64 = 1
        _ = write(wakeDescriptor, &one, MemoryLayout<UInt64>.size)
    }

    private func serve() {
        var pollers: [pollfd] = []
        var tokens: [UInt64] = []
        var ready: [@Sendable () -> Void] = []
        while true {
            pollers.removeAll(keepingCapacity: true)
            tokens.removeAll(keepingCapacity: true)
            pollers.append(pollfd(fd: wakeDescriptor, events: Int16(POLLIN), revents: 0))
            watched.withLock { state in
                for (token, entry) in state.entries where entry.armed {
                    pollers.append(pollfd(fd: entry.descriptor, events: Int16(POLLIN), revents: 0))
                    tokens.append(token)
                }
            }
            guard poll(&pollers, nfds_t(pollers.count), wakeDescriptor >= 0 ? -1 : 50) > 0 else { continue }
            if pollers[0].revents != 0 {
                var counter: UInt64 = 0
                _ = read(wakeDescriptor, &counter, MemoryLayout<UInt64>.size)
            }
            // A descriptor stopped (and perhaps closed and reused) while this poll ran has no
            // entry, or another one, by now: only a token still armed on it is told.
            watched.withLock { state in
                for index in 1..<pollers.count where pollers[index].revents != 0 {
                    let token = tokens[index - 1]
                    guard let entry = state.entries[token], entry.armed, entry.descriptor == pollers[index].fd else { continue }
                    state.entries[token]?.armed = false
                    ready.append(entry.onReadable)
                }
            }
            for onReadable in ready { onReadable() }
            ready.removeAll(keepingCapacity: true)
        }
    }
}
