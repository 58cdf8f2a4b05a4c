internal import Glibc
package import CBerth
internal import CBerthSystem

/// One end of a re-entrant request/reply channel over a `SOCK_STREAM` socket (a
/// socketpair between a host and its plugin worker). Frames are length-prefixed binary
/// (`IsolationWire`); messages are `IsolationRequest`, `IsolationReply` and
/// `IsolationNotification`.
///
/// `call` sends a request and blocks until its reply; while it waits it serves what the
/// peer sends on the same stack: a request from the peer goes to the handler (which may
/// `call` back, nesting as deep as needed), a notification to the handler too. Replies
/// therefore come back in stack order. One thread at a time drives the reading side:
/// `call`, `serveNext` and `serveAvailable` hold it for their whole run (re-entrantly: a
/// nested call on the same stack holds it again), so a second thread waits its turn.
/// `notify` may be used from any thread.
///
/// `@unchecked Sendable`: the receive buffer, the abandoned-call set and the budget are
/// only touched by the thread driving the reading side (`readSide`); the socket's writes
/// are serialized by `writing`; the timeout, call numbering, nesting depth, failure and
/// handler are `Locked` (the handler is `Sendable`).
package final class IsolationChannel: @unchecked Sendable {
    /// Who is at the other end (a plugin id, or "host"); named in every error.
    package let peer: String
    private let socket: ChannelSocket
    private let buffer = ReceiveBuffer()

    /// Which thread drives the reading side, and how many of its calls hold it.
    private struct ReadSide {
        var owner: pthread_t?
        var holds = 0
    }
    private let readSide = LockedCondition(ReadSide())
    /// Held while a frame is written, so frames from two threads never interleave.
    private let writing = Locked(())

    private struct State {
        var defaultTimeout: Duration?
        var nextCallID: UInt64 = 1
        /// Set when the stream can no longer be trusted (closed, or a frame half sent).
        var failure: ChannelError?
        var depth = 0
    }
    private let state = Locked(State())
    /// Set by the channel's owner, read by the thread driving the reading side.
    private let currentHandler = Locked(HandlerReference())

    /// Calls that timed out: their late replies are dropped.
    private var abandonedCalls: Set<UInt64> = []
    /// The budget of one outermost call, and what the one running has spent.
    private var budget: CallBudget?
    private var outermostStart = ContinuousClock.now
    private var nestedRequestsServed = 0
    /// How long this side took to answer the peer's requests during the outermost call, and
    /// since when it is answering one: the budget is the peer's time, not this side's (a
    /// plugin may wait for the host, however long the host takes).
    private var answeringTime: Duration = .zero
    private var answeringSince: ContinuousClock.Instant?

    /// Takes ownership of `fileDescriptor` (one end of `makeSocketPair()`), which is made
    /// non-blocking and closed when the channel goes away.
    package init(fileDescriptor: Int32, peer: String, handler: (any IsolationChannelHandler)? = nil) throws(ChannelError) {
        self.peer = peer
        self.socket = ChannelSocket(descriptor: fileDescriptor, peer: peer)
        self.currentHandler.withLock { $0.handler = handler }
        try socket.makeNonBlocking()
    }

    deinit {
        socket.close()
    }

    /// A connected socketpair, both ends close-on-exec: one for this process's channel, the
    /// other for the worker (see `WorkerProcess.spawn`).
    package static func makeSocketPair() throws(ChannelError) -> (Int32, Int32) {
        try ChannelSocket.makePair(peer: "socketpair")
    }

    /// The socket, for a run loop that watches it while idle (then call `serveAvailable`).
    package var fileDescriptor: Int32 { socket.descriptor }

    /// Serves the peer's requests and notifications. Held weakly.
    package var handler: (any IsolationChannelHandler)? {
        get { currentHandler.withLock { $0.handler } }
        set { currentHandler.withLock { $0.handler = newValue } }
    }

    /// How long `call` waits when not told otherwise; nil waits as long as it takes.
    package var replyTimeout: Duration? {
        get { state.withLock { $0.defaultTimeout } }
        set { state.withLock { $0.defaultTimeout = newValue } }
    }

    /// What one outermost `call` may take from the peer (the host's side of a worker's
    /// channel sets `.worker`); nil for no budget. A call past it throws `.timedOut`, as a
    /// silent peer does: a peer that keeps calling back is as stuck as one that never answers.
    package var callBudget: CallBudget? {
        get { drivingReadSide { budget } }
        set { drivingReadSide { budget = newValue } }
    }

    /// How many calls the reading thread is inside: 0 at top level, 1 in a handler serving
    /// a request that arrived during a call, and so on.
    package var callDepth: Int { state.withLock { $0.depth } }
    /// How many calls this side has made so far (each is one round trip).
    package var callsMade: UInt64 { state.withLock { $0.nextCallID - 1 } }

    /// Sends `request` and returns its reply, serving the peer's requests and notifications
    /// while it waits.
    ///
    /// `timeout` (or `replyTimeout` when nil) bounds the silence: the clock restarts each
    /// time a nested request from the peer has been answered, so a worker busy calling
    /// back is not taken for a hung one; notifications do not restart it. `callBudget`
    /// bounds the peer's time in the whole outermost call (the time this side takes to
    /// answer its requests does not count). On timeout the call is abandoned (a late reply is
    /// dropped) and `.timedOut` is thrown.
    /// With `prepared`, the call `prepare` began for `request`: its frame is sent here only
    /// when it did not go then.
    package func call(_ request: IsolationRequest, prepared: PreparedCall? = nil, timeout: Duration? = nil) throws(ChannelError) -> IsolationReply {
        try drivingReadSide { () throws(ChannelError) in try callDriving(request, prepared: prepared, timeout: timeout) }
    }

    /// A top-level call begun by one thread (`prepare`) for another to finish (`call(_:prepared:)`):
    /// its number and frame, and whether the frame is on the wire already.
    package struct PreparedCall: Sendable {
        fileprivate let callID: UInt64
        fileprivate let frame: [UInt8]
        /// The request went out at once: the peer is at work before the finishing thread wakes.
        package let sent: Bool
    }

    /// The largest frame `prepare` sends itself.
    private static let sentAheadLimit = 4096

    /// Begins `request` as a top-level call on the calling thread, which never waits here:
    /// its frame goes out at once when no call is under way on this channel, the frame is
    /// small and the peer has read everything sent before (so the socket takes it whole).
    /// `call(_:prepared:)`, on the thread that then waits for the reply, sends it if it did
    /// not go. A host begins a worker call on its main actor and hands the wait to the
    /// plugin's lane: the worker starts while the lane wakes (P8 in Docs/benchmarks.md).
    package func prepare(_ request: IsolationRequest) -> PreparedCall? {
        guard readSide.withLock({ $0.owner == nil }) else { return nil }
        let reserved = state.withLock { state -> UInt64? in
            guard state.failure == nil, state.depth == 0 else { return nil }
            defer { state.nextCallID += 1 }
            return state.nextCallID
        }
        guard let callID = reserved else { return nil }
        let frame = Frame.encode(kind: .request, op: request.op, callID: callID, reservingCapacity: request.encodedSizeHint) {
            request.write(to: &$0)
        }
        guard frame.count <= Self.sentAheadLimit else { return PreparedCall(callID: callID, frame: frame, sent: false) }
        let sent = writing.withLock { _ -> Bool in
            guard berth_socket_unsent(socket.descriptor) == 0 else { return false }
            let count = socket.sendOnce(frame)
            guard count > 0, count < frame.count else { return count == frame.count }
            // Not seen with an empty queue and a small frame; the rest follows before any other
            // frame may, or the stream is poisoned (`call` then throws).
            let (_, failure) = socket.writeAll(Array(frame[count...]), deadline: .now + .seconds(2), operation: "call \(request.name)")
            if let failure { _ = poison(failure) }
            return true
        }
        return PreparedCall(callID: callID, frame: frame, sent: sent)
    }

    /// `call`, on the thread driving the reading side.
    private func callDriving(_ request: IsolationRequest, prepared: PreparedCall?, timeout: Duration?) throws(ChannelError) -> IsolationReply {
        let operation = "call \(request.name)"
        let (callID, limit, failed, depth) = state.withLock { state in
            if let prepared { return (prepared.callID, timeout ?? state.defaultTimeout, state.failure, state.depth) }
            defer { state.nextCallID += 1 }
            return (state.nextCallID, timeout ?? state.defaultTimeout, state.failure, state.depth)
        }
        if let failed { throw failed }
        if depth == 0 {
            outermostStart = .now
            nestedRequestsServed = 0
            answeringTime = .zero
            answeringSince = nil
        }
        // A call made while answering the peer (this side calling it back) is the peer's
        // time again: the answering clock stops until it returns.
        let pausedAnswer = answeringSince
        if let since = pausedAnswer {
            answeringTime += ContinuousClock.now - since
            answeringSince = nil
        }
        defer { if pausedAnswer != nil { answeringSince = .now } }
        var budgetEnd = budgetEndNow()
        var deadline = earliest(limit.map { ContinuousClock.now + $0 }, budgetEnd)
        if let prepared {
            if !prepared.sent { try send(prepared.frame, deadline: deadline, operation: operation) }
        } else {
            let frame = Frame.encode(kind: .request, op: request.op, callID: callID, reservingCapacity: request.encodedSizeHint) {
                request.write(to: &$0)
            }
            try send(frame, deadline: deadline, operation: operation)
        }
        state.withLock { $0.depth += 1 }
        defer { state.withLock { $0.depth -= 1 } }
        while true {
            guard let incoming = try nextFrame(until: deadline, operation: operation) else {
                abandonedCalls.insert(callID)
                if let budget, let budgetEnd, ContinuousClock.now >= budgetEnd {
                    throw ChannelError(.timedOut, peer: peer, operation: operation,
                                       detail: "one call ran past its budget of \(budget.maximumDuration)")
                }
                throw ChannelError(.timedOut, peer: peer, operation: operation,
                                   detail: "no reply within \(limit.map { "\($0)" } ?? "the timeout")")
            }
            switch incoming.kind {
            case .reply:
                if incoming.callID == callID {
                    let reply = try decodeReply(incoming, operation: operation)
                    if depth == 0, !buffer.isEmpty { try deliverBufferedNotifications() }
                    return reply
                }
                try dropLateReply(incoming, operation: operation)
            case .request:
                let outermostAnswer = answeringSince == nil
                if outermostAnswer { answeringSince = .now }
                try serveRequest(incoming)
                if outermostAnswer, let since = answeringSince {
                    answeringTime += ContinuousClock.now - since
                    answeringSince = nil
                }
                budgetEnd = budgetEndNow()
                nestedRequestsServed += 1
                if let budget, nestedRequestsServed > budget.maximumNestedRequests {
                    abandonedCalls.insert(callID)
                    throw ChannelError(.timedOut, peer: peer, operation: operation,
                                       detail: "one call made more than \(budget.maximumNestedRequests) requests back, its budget")
                }
                deadline = earliest(limit.map { ContinuousClock.now + $0 }, budgetEnd)
            case .notification:
                try deliverNotification(incoming)
            }
        }
    }

    /// When the outermost call's budget runs out: its start, plus the budget, plus the time
    /// this side has spent answering the peer's requests (the one being answered included).
    private func budgetEndNow() -> ContinuousClock.Instant? {
        guard let budget else { return nil }
        let answering = answeringTime + (answeringSince.map { ContinuousClock.now - $0 } ?? .zero)
        return outermostStart + budget.maximumDuration + answering
    }

    /// Sends a notification; safe from any thread. Blocks while the socket is full.
    package func notify(_ notification: IsolationNotification) throws(ChannelError) {
        if let failure = state.withLock({ $0.failure }) { throw failure }
        let frame = Frame.encode(kind: .notification, op: notification.op, callID: 0) { notification.write(to: &$0) }
        try send(frame, deadline: nil, operation: "notify")
    }

    /// Waits up to `timeout` (nil: forever) for one frame from the peer and serves it.
    /// Returns false when the time ran out first.
    @discardableResult
    package func serveNext(timeout: Duration? = nil) throws(ChannelError) -> Bool {
        try drivingReadSide { () throws(ChannelError) -> Bool in
            if let failure = state.withLock({ $0.failure }) { throw failure }
            guard let frame = try nextFrame(until: timeout.map { ContinuousClock.now + $0 }, operation: "wait") else { return false }
            try dispatchUnsolicited(frame)
            return true
        }
    }

    /// Serves every frame the peer has already sent, without waiting. Returns how many.
    @discardableResult
    package func serveAvailable() throws(ChannelError) -> Int {
        try drivingReadSide { () throws(ChannelError) -> Int in
            if let failure = state.withLock({ $0.failure }) { throw failure }
            var served = 0
            while let frame = try nextFrame(until: ContinuousClock.now, operation: "poll") {
                try dispatchUnsolicited(frame)
                served += 1
            }
            return served
        }
    }

    /// Closes this side: the peer sees end of file and a thread waiting here wakes up with
    /// `.closed`. The descriptor itself is closed when the channel is released.
    package func close() {
        state.withLock { state in
            if state.failure == nil { state.failure = ChannelError(.closed, peer: peer, operation: "close") }
        }
        socket.shutDown()
    }

    /// Runs `body` as the thread driving the reading side: waits while another thread
    /// drives it; a nested call on the driving thread's own stack goes straight in.
    private func drivingReadSide<Result, Failure: Error>(_ body: () throws(Failure) -> Result) throws(Failure) -> Result {
        let me = pthread_self()
        readSide.wait { side, _ -> LockedCondition<ReadSide>.Decision<Void> in
            if let owner = side.owner, pthread_equal(owner, me) == 0 { return .wait }
            side.owner = me
            side.holds += 1
            return .finish(())
        }
        defer {
            let released = readSide.withLock { side in
                side.holds -= 1
                guard side.holds == 0 else { return false }
                side.owner = nil
                return true
            }
            if released { readSide.signal() }
        }
        return try body()
    }

    private func earliest(_ first: ContinuousClock.Instant?, _ second: ContinuousClock.Instant?) -> ContinuousClock.Instant? {
        guard let first, let second else { return first ?? second }
        return min(first, second)
    }

    // MARK: Receiving

    /// The next frame, reading as needed until `deadline`; nil when it passed first.
    private func nextFrame(until deadline: ContinuousClock.Instant?, operation: String) throws(ChannelError) -> Frame? {
        while true {
            do {
                if let frame = try buffer.takeFrame() { return frame }
            } catch {
                throw poison(ChannelError(.malformed, peer: peer, operation: operation, detail: error.detail))
            }
            do {
                if case .bytes = try buffer.fill(from: socket) { continue }
                guard try socket.waitReadable(until: deadline, operation: operation) else { return nil }
            } catch {
                // A close() from another thread shows up here as end of file.
                if let closed = state.withLock({ $0.failure }), closed.code == .closed { throw closed }
                throw poison(error)
            }
        }
    }

    /// Delivers the whole notifications an outermost call read past its reply: the peer sent
    /// them right after it (a plugin thread's log or task post), the same read took them in,
    /// and a watcher of the socket, which sees only unread bytes, would never report them.
    /// A request stays for the loop that serves requests, never run inside this call.
    private func deliverBufferedNotifications() throws(ChannelError) {
        while buffer.frontKind == .notification {
            let frame: Frame?
            do {
                frame = try buffer.takeFrame()
            } catch {
                throw poison(ChannelError(.malformed, peer: peer, operation: "read past a reply", detail: error.detail))
            }
            guard let frame else { return }
            try deliverNotification(frame)
        }
    }

    /// A frame that arrived while no call of ours was waiting (or an idle poll).
    private func dispatchUnsolicited(_ frame: Frame) throws(ChannelError) {
        switch frame.kind {
        case .request: try serveRequest(frame)
        case .notification: try deliverNotification(frame)
        case .reply: try dropLateReply(frame, operation: "wait")
        }
    }

    private func serveRequest(_ frame: Frame) throws(ChannelError) {
        let reply: IsolationReply
        var reader = WireReader(frame.body)
        do {
            if let request = try IsolationRequest.read(op: frame.op, from: &reader) {
                if let handler = handler {
                    reply = handler.handle(request, on: self)
                } else {
                    reply = .status(.failure(Int(BERTH_ERR_UNSUPPORTED), "\(request.name): nothing serves requests on this side"))
                }
            } else {
                reply = .status(.failure(Int(BERTH_ERR_UNSUPPORTED), "request op \(frame.op) is unknown to this side"))
            }
        } catch {
            reply = .status(.failure(Int(BERTH_ERR_DECODE), "request op \(frame.op) could not be decoded: \(error.detail)"))
        }
        let encoded = Frame.encode(kind: .reply, op: reply.op, callID: frame.callID, reservingCapacity: reply.encodedSizeHint) {
            reply.write(to: &$0)
        }
        try send(encoded, deadline: nil, operation: "reply")
    }

    private func deliverNotification(_ frame: Frame) throws(ChannelError) {
        var reader = WireReader(frame.body)
        let notification: IsolationNotification?
        do {
            notification = try IsolationNotification.read(op: frame.op, from: &reader)
        } catch {
            throw poison(ChannelError(.malformed, peer: peer, operation: "notification op \(frame.op)", detail: error.detail))
        }
        // An op this side does not know is a newer peer's: ignored.
        guard let notification else { return }
        handler?.receive(notification, on: self)
    }

    private func decodeReply(_ frame: Frame, operation: String) throws(ChannelError) -> IsolationReply {
        var reader = WireReader(frame.body)
        do {
            return try IsolationReply.read(op: frame.op, from: &reader)
        } catch {
            throw ChannelError(.malformed, peer: peer, operation: operation, detail: error.detail)
        }
    }

    /// A reply that is not for the call waiting: fine for an abandoned call, else the
    /// peer broke the stack order.
    private func dropLateReply(_ frame: Frame, operation: String) throws(ChannelError) {
        guard abandonedCalls.remove(frame.callID) != nil else {
            throw poison(ChannelError(.protocolViolation, peer: peer, operation: operation,
                                      detail: "a reply to call \(frame.callID), which is not waiting"))
        }
    }

    // MARK: Sending

    private func send(_ frame: [UInt8], deadline: ContinuousClock.Instant?, operation: String) throws(ChannelError) {
        guard frame.count - 4 <= IsolationWire.maximumFrameSize + IsolationWire.headerSize else {
            throw ChannelError(.malformed, peer: peer, operation: operation,
                               detail: "a \(frame.count)-byte frame is larger than the \(IsolationWire.maximumFrameSize)-byte limit")
        }
        let (written, failure) = writing.withLock { _ in socket.writeAll(frame, deadline: deadline, operation: operation) }
        guard let failure else { return }
        // Half a frame on the wire: nothing after it can be read right.
        if written > 0 || failure.code != .timedOut { throw poison(failure) }
        throw failure
    }

    /// Records a failure that leaves the stream unusable; every later use throws it.
    private func poison(_ error: ChannelError) -> ChannelError {
        state.withLock { state in
            if state.failure == nil { state.failure = error }
        }
        return error
    }
}

/// What one outermost call may take from the peer: how many requests back (each one
/// answered restarts the silence clock) and how long in all.
package struct CallBudget: Sendable, Equatable {
    package var maximumNestedRequests: Int
    package var maximumDuration: Duration

    package init(maximumNestedRequests: Int, maximumDuration: Duration) {
        self.maximumNestedRequests = maximumNestedRequests
        self.maximumDuration = maximumDuration
    }

    /// A worker's, as its host holds it: 20,000 host calls or 30 seconds per call the host
    /// makes (an action, a render, a load). Far above any plugin's need, far below a storm.
    package static let worker = CallBudget(maximumNestedRequests: 20_000, maximumDuration: .seconds(30))
}

/// A channel's handler, held weakly.
private struct HandlerReference: Sendable {
    weak var handler: (any IsolationChannelHandler)?
}
