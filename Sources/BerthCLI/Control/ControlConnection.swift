import BerthRuntime
import CBerthSystem
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// One client connection of the control socket.
///
/// Only the connection's own thread (the one the server runs `serve` on) reads from or
/// writes to the socket. Other threads, in practice the main actor pushing
/// `events --follow` frames, only append to the connection's outgoing queue, which never
/// blocks: the frame is queued, the connection's thread is woken through an eventfd, and
/// it writes what the client will take. A follower whose queue grows past
/// `followerLimit` is dropped: what is queued is discarded, a final `dropped: too slow`
/// frame is queued instead, and nothing more is accepted.
///
/// `descriptor` and `wakeDescriptor` are set once in `init`; the queue is `Locked`, and the
/// writes to the socket and the eventfd and their closing happen with its lock held, so a
/// descriptor is never used after `finish` closed it. Blocking reads and waits happen only
/// on the connection's own thread, before `finish`.
final class ControlConnection: Sendable {
    /// How far (in bytes of frames not yet written) a follower may fall behind the events
    /// before it is dropped. The kernel's own socket buffer comes on top of this.
    static let followerLimit = 256 * 1024

    /// What `enqueue` did.
    enum Queued: Equatable {
        case queued
        /// This frame would have put the follower over the limit: it is dropped now.
        case dropped
        /// The connection is dropped or finished already; nothing was queued.
        case refused
    }

    /// How a wait for the client ended.
    enum Outcome: Equatable {
        /// Everything queued was written.
        case written
        /// The client closed its end, or the socket failed.
        case gone
    }

    let descriptor: Int32
    private let wakeDescriptor: Int32
    /// What is waiting to be written, and whether the connection still takes more.
    private struct Queue {
        /// Frames not yet written in full, oldest first, from `head` on.
        var frames: [[UInt8]] = []
        /// Whether each frame in `frames` counts against `followerLimit` (replies and the
        /// history sent when following starts do not).
        var counted: [Bool] = []
        var head = 0
        /// Bytes of `frames[head]` already written.
        var headWritten = 0
        /// Bytes of counted frames not yet written.
        var countedBytes = 0
        var dropped = false
        var finished = false
    }
    private let queue = Locked(Queue())

    init(descriptor: Int32) {
        self.descriptor = descriptor
        wakeDescriptor = berth_wake_descriptor()
    }

    deinit {
        // `serve` finishes every connection; this only guards against a leak.
        if !queue.withLock({ $0.finished }) {
            close(descriptor)
            if wakeDescriptor >= 0 { close(wakeDescriptor) }
        }
    }

    /// Queues `reply` without blocking. `counted` frames (events pushed to a follower) are
    /// held to `followerLimit`.
    @discardableResult
    func enqueue(_ reply: ControlReply, counted isCounted: Bool) -> Queued {
        let frame = Self.frame(reply)
        return queue.withLock { queue in
            guard !queue.finished, !queue.dropped else { return .refused }
            if isCounted && queue.countedBytes + frame.count > Self.followerLimit {
                queue.dropped = true
                // A frame already partly written must be finished, or the client would
                // read the rest of the stream out of step; everything after it goes.
                let partial = queue.headWritten > 0 ? queue.frames[queue.head] : nil
                queue.frames = partial.map { [$0] } ?? []
                queue.counted = partial == nil ? [] : [false]
                queue.head = 0
                queue.countedBytes = 0
                let notice = ControlReply(ok: false, errors: ["dropped: too slow (the client fell more than \(Self.followerLimit / 1024) KiB of events behind)"])
                queue.frames.append(Self.frame(notice))
                queue.counted.append(false)
                wake()
                return .dropped
            }
            queue.frames.append(frame)
            queue.counted.append(isCounted)
            if isCounted { queue.countedBytes += frame.count }
            wake()
            return .queued
        }
    }

    /// Sends a reply from the connection's own thread: queues it and waits until the
    /// client has taken all of it or has gone. Only this connection waits.
    @discardableResult
    func reply(_ reply: ControlReply) -> Outcome {
        enqueue(reply, counted: false)
        while true {
            switch writeQueued() {
            case .gone: return .gone
            case .written: return .written
            case nil: break
            }
            var poller = pollfd(fd: descriptor, events: Int16(POLLOUT), revents: 0)
            if poll(&poller, 1, -1) < 0 && errno != EINTR { return .gone }
            if poller.revents & Int16(POLLERR | POLLHUP | POLLNVAL) != 0 { return .gone }
        }
    }

    /// While following: writes queued frames as the client takes them, until the client
    /// leaves, or, once dropped, until it has taken the final `dropped` frame. Whatever
    /// the client sends meanwhile is read and ignored. Runs on the connection's thread.
    func pump() {
        var scratch = [UInt8](repeating: 0, count: 4096)
        while true {
            if writeQueued() == .gone { return }
            let (pending, done) = queue.withLock { ($0.head < $0.frames.count, $0.dropped && $0.head == $0.frames.count) }
            if done { return }
            var pollers = [
                pollfd(fd: descriptor, events: Int16(POLLIN) | (pending ? Int16(POLLOUT) : 0), revents: 0),
                pollfd(fd: wakeDescriptor, events: Int16(POLLIN), revents: 0),
            ]
            // Without an eventfd (its creation failed) new frames are noticed by looking often.
            if poll(&pollers, 2, wakeDescriptor >= 0 ? -1 : 50) < 0 {
                if errno == EINTR { continue }
                return
            }
            if pollers[0].revents & Int16(POLLIN | POLLHUP | POLLERR | POLLNVAL) != 0 {
                let count = scratch.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
                if count == 0 || (count < 0 && errno != EAGAIN && errno != EINTR) { return }
            }
            if pollers[1].revents & Int16(POLLIN) != 0 {
                var counter: UInt64 = 0
                _ = read(wakeDescriptor, &counter, MemoryLayout<UInt64>.size)
            }
        }
    }

    /// Ends the connection politely: no more writing, then a short wait for the client to
    /// close its end while what it sent is read and discarded, then close. (Closed at once,
    /// with a request unread, the client's write of that request would fail, and a client
    /// that gives up then never reads the reply waiting for it.) Idempotent.
    func finish(drainFor milliseconds: Int32 = 1000) {
        let first = queue.withLock { queue -> Bool in
            defer { queue.finished = true }
            return !queue.finished
        }
        guard first else { return }
        shutdown(descriptor, Int32(SHUT_WR))
        var scratch = [UInt8](repeating: 0, count: 4096)
        var discarded = 0
        let deadline = DispatchTime.now().uptimeNanoseconds + UInt64(milliseconds) * 1_000_000
        while discarded <= ControlProtocol.maximumFrame + 4 {
            let now = DispatchTime.now().uptimeNanoseconds
            guard now < deadline else { break }
            var poller = pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)
            let ready = poll(&poller, 1, Int32((deadline - now) / 1_000_000) + 1)
            if ready < 0 && errno == EINTR { continue }
            guard ready > 0 else { break }
            let count = scratch.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            if count < 0 && (errno == EAGAIN || errno == EINTR) { continue }
            guard count > 0 else { break }
            discarded += count
        }
        queue.withLock { _ in
            close(descriptor)
            if wakeDescriptor >= 0 { close(wakeDescriptor) }
        }
    }

    // MARK: Private

    private static func frame(_ reply: ControlReply) -> [UInt8] {
        let payload = ControlProtocol.encode(reply)
        return withUnsafeBytes(of: UInt32(payload.count).bigEndian, Array.init) + payload
    }

    private func wake() {
        guard wakeDescriptor >= 0 else { return }
        var one: UInt64 = 1
        _ = write(wakeDescriptor, &one, MemoryLayout<UInt64>.size)
    }

    /// One step of writing the queue.
    private enum Step {
        case progress, empty, blocked, failed
    }

    /// Writes queued frames until the queue is empty (`.written`), the client will take
    /// no more for now (nil), or the socket failed (`.gone`). Never blocks.
    private func writeQueued() -> Outcome? {
        while true {
            switch queue.withLock({ writeStep(&$0) }) {
            case .progress: continue
            case .empty: return .written
            case .blocked: return nil
            case .failed: return .gone
            }
        }
    }

    /// Writes what it can of the oldest frame, with the queue's lock held: a non-blocking `send`,
    /// so the main actor, if it waits for the lock to queue a frame, waits for no client.
    private func writeStep(_ queue: inout Queue) -> Step {
        guard !queue.finished else { return .failed }
        guard queue.head < queue.frames.count else {
            queue.frames.removeAll(keepingCapacity: true)
            queue.counted.removeAll(keepingCapacity: true)
            queue.head = 0
            return .empty
        }
        let frame = queue.frames[queue.head]
        let sent = frame.withUnsafeBytes {
            send(descriptor, $0.baseAddress! + queue.headWritten, frame.count - queue.headWritten, Int32(MSG_DONTWAIT | MSG_NOSIGNAL))
        }
        if sent < 0 {
            switch errno {
            case EINTR: return .progress
            case EAGAIN: return .blocked
            default: return .failed
            }
        }
        queue.headWritten += sent
        if queue.headWritten == frame.count {
            if queue.counted[queue.head] { queue.countedBytes -= frame.count }
            queue.headWritten = 0
            queue.head += 1
            // Let go of written frames now and then rather than after every one.
            if queue.head >= 256 && queue.head * 2 >= queue.frames.count {
                queue.frames.removeFirst(queue.head)
                queue.counted.removeFirst(queue.head)
                queue.head = 0
            }
        }
        return .progress
    }
}
