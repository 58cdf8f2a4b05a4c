import Foundation
import Synchronization
import Testing
@_spi(Engine) @testable import BerthRuntime
import BerthTestSupport

@Suite("Channel watcher: one thread watches every idle worker channel")
struct ChannelWatcherTests {
    /// A connected pair of Unix stream sockets; `watched` is the end the watcher polls.
    private struct SocketPair: ~Copyable {
        let watched: Int32
        let peer: Int32

        init() throws {
            var ends: [Int32] = [-1, -1]
            guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &ends) == 0 else { throw POSIXError(.EMFILE) }
            (watched, peer) = (ends[0], ends[1])
        }

        func send(_ byte: UInt8) {
            var byte = byte
            _ = write(peer, &byte, 1)
        }

        /// The peer goes away, as a worker that dies does: the watched end reads its end.
        func hangUp() {
            shutdown(peer, Int32(SHUT_RDWR))
        }

        /// Reads what is readable on the watched end, as its owner serves it.
        func drain() {
            var scratch = [UInt8](repeating: 0, count: 64)
            _ = recv(watched, &scratch, scratch.count, Int32(MSG_DONTWAIT))
        }

        deinit {
            close(watched)
            close(peer)
        }
    }

    /// A count shared with closures that run on other threads.
    private final class Count: Sendable {
        private let atomic = Atomic<Int>(0)
        func add() { _ = atomic.add(1, ordering: .relaxed) }
        var value: Int { atomic.load(ordering: .relaxed) }
    }

    /// Returns once the watcher has reported a control channel made readable now: whatever
    /// it would report of data sent before this call, it has reported by then (the positive
    /// control a negative check waits for, instead of a fixed sleep).
    private func afterWatcherPass(_ watcher: ChannelWatcher) -> Bool {
        let control = try? SocketPair()
        guard let control else { return false }
        let reported = Count()
        let token = watcher.watch(control.watched) { reported.add() }
        control.send(0)
        defer { watcher.stop(token) }
        return eventually { reported.value == 1 }
    }

    @Test("a readable channel is reported once per arming; re-armed, once more; stopped, never")
    func oncePerArming() throws {
        let pair = try SocketPair()
        let reports = Count()
        let watcher = ChannelWatcher.shared
        let token = watcher.watch(pair.watched) { reports.add() }
        pair.send(1)
        #expect(eventually { reports.value == 1 })
        // Unserved and not re-armed: more data is not reported, and nothing spins.
        pair.send(2)
        #expect(afterWatcherPass(watcher))
        #expect(reports.value == 1)
        pair.drain()
        pair.send(3)
        watcher.rearm(token)
        #expect(eventually { reports.value == 2 })
        pair.drain()
        watcher.stop(token)
        watcher.rearm(token)
        pair.send(4)
        #expect(afterWatcherPass(watcher))
        #expect(reports.value == 2)
    }

    @Test("paused for a call, a channel's data and hang-up are not reported; re-armed, what is readable is reported at once")
    func pausedForACall() throws {
        let channel = try SocketPair()
        let reports = Count()
        let watcher = ChannelWatcher.shared
        let token = watcher.watch(channel.watched) { reports.add() }
        defer { watcher.stop(token) }
        watcher.pause(token)
        channel.send(1)
        channel.hangUp()
        #expect(afterWatcherPass(watcher))
        #expect(reports.value == 0)
        // The call is over: the byte (and the end) it left unread is reported, once.
        watcher.rearm(token)
        #expect(eventually { reports.value == 1 })
        #expect(afterWatcherPass(watcher))
        #expect(reports.value == 1)
    }

    @Test("a peer that closes its end is reported, so a worker that dies between calls is noticed")
    func peerClosed() throws {
        let channel = try SocketPair()
        let reported = Count()
        let token = ChannelWatcher.shared.watch(channel.watched) { reported.add() }
        defer { ChannelWatcher.shared.stop(token) }
        channel.hangUp()
        #expect(eventually { reported.value > 0 })
    }
}
