import Foundation
import Testing
@_spi(Engine) @testable import BerthRuntime
import BerthTestSupport

extension IsolationWorkerTests {
    /// The channel on its own: both ends in this process, the far end served on a thread.
    @Suite("Isolation channel")
    struct Channel {
        @Test("a sandbox status survives encoding, and an unconfined one says why with the errno's text")
        func sandboxStatus() throws {
            for status in [SandboxStatus.off, .enforced(landlockABI: 4), .unavailable(landlockErrno: ENOSYS)] {
                var writer = WireWriter()
                status.write(to: &writer)
                var reader = WireReader(writer.bytes)
                #expect(try SandboxStatus.read(from: &reader) == status)
            }
            #expect(SandboxStatus.enforced(landlockABI: 4).unconfinedBecause == nil)
            #expect(SandboxStatus.unavailable(landlockErrno: ENOSYS).unconfinedBecause
                == "Landlock is not available in this kernel (\(String(cString: strerror(ENOSYS))))")
        }

        @Test("every message survives encoding and decoding")
        func codec() throws {
            let slot = IsolationStateSlot(identity: "Screen/VStack.0/Text", index: 2, fingerprint: 0xFEED_BEEF, bytes: [0, 1, 255])
            let requests: [IsolationRequest] = [
                .hello(WorkerHello(pluginID: "p", libraryPath: "/l.so", entry: "e", runtime: .swift, abi: ABIVersion(major: 1, minor: 3),
                                   routes: ["a", "b"], exports: [ExportSignature(symbol: "f", params: [.bytes, .double], returns: .string)])),
                .create(screen: 1, route: "r", argument: [9]), .destroy(instance: 2), .activate(instance: 3), .deactivate(instance: 4),
                .screenEvent(instance: 5, event: 3, flag: true), .action(instance: 6, name: "n", payload: [1]),
                .delegateReceived(instance: 7, child: 8, name: "d", payload: []), .contextReceived(instance: 9, type: "t", payload: [2]),
                .render(instance: 10, slots: [slot, slot]), .saveState(instance: 11), .restoreState(instance: 12, state: [3]), .unload(),
                .callExport(symbol: "s", arguments: [.void, .bool(true), .int8(-1), .int16(-2), .int32(-3), .int64(-4), .uint8(1), .uint16(2),
                                                     .uint32(3), .uint64(.max), .float(1.5), .double(-2.25), .string("é"), .bytes([7])]),
                .shutdown, .host(.navigate(kind: 3, route: nil, argument: []), caller: 1), .host(.navigate(kind: 1, route: "x", argument: [1]), caller: 1),
                .host(.observeDelegate(child: 2), caller: 1), .host(.sendDelegate(action: "a", payload: [1]), caller: 1),
                .host(.contextObserve(type: "t"), caller: 1), .host(.contextUnobserve(type: "t"), caller: 1),
                .host(.contextSend(type: "t", payload: [1], mode: 1), caller: 1), .host(.contextCanTerminate(type: "t"), caller: 1),
                .host(.stateRead(key: slot.key, fingerprint: 5), caller: 1), .host(.stateWrite(slot: slot), caller: 1), .host(.persistRead(key: "k"), caller: 1),
                .host(.persistWrite(key: "k", value: [1]), caller: 1), .host(.sessionBegin(id: "s"), caller: 1), .host(.sessionEnd, caller: 1), .host(.sessionBegin(id: "t"), caller: 2),
                .serviceCreate(service: 1), .serviceRelease(instance: 2), .host(.serviceRegister(key: "k", kind: 1, service: 3, answersCalls: false), caller: 2),
                .host(.serviceRegister(key: "c", kind: 2, service: 4, answersCalls: true), caller: 2),
                .host(.serviceResolve(key: "k"), caller: 1), .serviceInvoke(instance: 7, request: Array("{}".utf8)),
                .host(.serviceCall(key: "c", request: [1, 2]), caller: 1), .create(plugin: 2, screen: 1, route: "r", argument: []), .unload(plugin: 2),
                .actionThenRender(instance: 6, name: "n", payload: [1], slots: [
                    RenderSlot(identityID: 3, identity: nil, index: 1, fingerprint: 9, bytes: [4]),
                    RenderSlot(identityID: RenderSlot.unknownIdentity, identity: "S/Text", index: 0, fingerprint: 2, bytes: []),
                ]),
            ]
            #expect(Set(requests.map(\.op)).count == 35, "each case has its own op")
            for request in requests {
                var writer = WireWriter()
                request.write(to: &writer)
                var reader = WireReader(writer.bytes)
                #expect(try IsolationRequest.read(op: request.op, from: &reader) == request)
            }
            let replies: [IsolationReply] = [
                .status(IsolationStatus(code: 4, message: "no")), .hello(WorkerHandshake(abi: ABIVersion(major: 1, minor: 0), tableSize: 112,
                                                                                           pluginID: "p", functions: [.render, .unload], workerProcessID: 9)),
                .helloFailed(LoaderError(.dlopenFailed, plugin: "p", "gone")), .created(.ok, instance: 3),
                .rendered(IsolationRenderResult(status: .ok, tree: [1, 2], readSlots: [0, 4], readMissing: [slot.key], writes: [slot])),
                .bytes(.ok, [1]), .navigated(.ok, screen: 7), .flag(true), .exported(.string("x")), .exportFailed(FFIError(.arity, "two")),
                .acted(.failure(2, "no"), render: nil), .acted(.ok, render: IsolationRenderResult(status: .ok, tree: [5])),
                .acted(.ok, render: IsolationRenderResult(status: .failure(2, "render refused"))),
            ]
            for reply in replies {
                var writer = WireWriter()
                reply.write(to: &writer)
                var reader = WireReader(writer.bytes)
                #expect(try IsolationReply.read(op: reply.op, from: &reader) == reply)
            }
            let notifications: [IsolationNotification] = [
                .log(level: 2, message: "m"), .taskStarted(screen: 1, key: "k", task: 2),
                .taskFinished(screen: 1, key: "k", task: 2, cancelled: true), .taskPost(screen: 1, task: 2, action: "a", payload: [1]),
            ]
            for notification in notifications {
                var writer = WireWriter()
                notification.write(to: &writer)
                var reader = WireReader(writer.bytes)
                #expect(try IsolationNotification.read(op: notification.op, from: &reader) == notification)
            }
        }

        @Test("a truncated body fails to decode instead of reading past its end")
        func truncated() throws {
            var writer = WireWriter()
            IsolationRequest.action(instance: 1, name: "name", payload: [1, 2, 3]).write(to: &writer)
            var reader = WireReader(Array(writer.bytes.dropLast()))
            #expect(throws: WireDecodingError.self) { try IsolationRequest.read(op: 7, from: &reader) }
        }

        @Test("a call prepared on one thread is on the wire at once, and its reply waits for the call that finishes it; a large request goes out with that call")
        func preparedCall() throws {
            let seen = Locked<[UInt64]>([])
            let (near, far) = try ChannelPair.make { request, _ in
                guard case .action(let instance, _, _) = request else { return .status(.ok) }
                seen.withLock { $0.append(instance) }
                return .status(IsolationStatus(code: 0, message: "did \(instance)"))
            }
            let small = IsolationRequest.action(instance: 1, name: "a", payload: [])
            let prepared = try #require(near.prepare(small))
            #expect(prepared.sent)
            #expect(eventually { seen.withLock { $0 } == [1] }, "the far side ran it before anyone waited for the reply")
            #expect(try near.call(small, prepared: prepared).status.message == "did 1")
            let big = IsolationRequest.action(instance: 2, name: "b", payload: [UInt8](repeating: 7, count: 10_000))
            let large = try #require(near.prepare(big))
            #expect(!large.sent)
            #expect(seen.withLock { $0 } == [1])
            #expect(try near.call(big, prepared: large).status.message == "did 2")
            #expect(near.callsMade == 2)
            near.close()
            far.waitUntilStopped()
        }

        @Test("calls nest on one stack: each side serves the other's requests while it waits")
        func nesting() throws {
            let (near, far) = try ChannelPair.make { request, channel in
                // The far side: "down" n calls back "navigate" n until n is 0.
                guard case .action(let level, _, _) = request else { return .status(.ok) }
                guard level > 0 else { return .status(IsolationStatus(code: 0, message: "bottom")) }
                let reply = (try? channel.call(.host(.navigate(kind: 1, route: "up", argument: []), caller: level))) ?? .status(IsolationStatus(code: 5))
                return .status(IsolationStatus(code: 0, message: "\(level)>\(reply.status.message)"))
            }
            let depths = Locked<[Int]>([])
            let handler = ClosureHandler { request, channel in
                guard case .host(.navigate, let level) = request else { return .status(.ok) }
                depths.withLock { $0.append(channel.callDepth) }
                let below = (try? channel.call(.action(instance: level - 1, name: "down", payload: []))) ?? .status(IsolationStatus(code: 5))
                return .navigated(below.status, screen: level)
            }
            near.handler = handler
            let reply = try near.call(.action(instance: 5, name: "down", payload: []))
            #expect(reply.status.message == "5>4>3>2>1>bottom")
            #expect(depths.withLock { $0 } == [1, 2, 3, 4, 5])
            near.close()
            far.waitUntilStopped()
        }

        @Test("the call budget is the peer's time: answering its request slowly does not use it up; the peer's own time does, also inside a call back to it")
        func budgetCountsThePeersTime() throws {
            let (near, far) = try ChannelPair.make { request, channel in
                // The far side (a worker): "slow" asks the near side (the host) once and
                // answers; "spin" works past the budget itself; "nested" asks the host, which
                // calls it back ("work"), and it works past the budget there.
                guard case .action(_, let name, _) = request else { return .status(.ok) }
                if name == "spin" { Thread.sleep(forTimeInterval: 2.5) }
                if name == "work" {
                    // 3 s of its own, with a quick request to the host in the middle.
                    Thread.sleep(forTimeInterval: 1.5)
                    _ = try? channel.call(.host(.navigate(kind: 1, route: "tick", argument: []), caller: 1))
                    Thread.sleep(forTimeInterval: 1.5)
                    return .status(IsolationStatus(code: 0, message: "worked"))
                }
                let route = name == "nested" ? "nest" : "up"
                let reply = (try? channel.call(.host(.navigate(kind: 1, route: route, argument: []), caller: 1))) ?? .status(IsolationStatus(code: 5))
                return .status(IsolationStatus(code: 0, message: "answered: \(reply.status.message)"))
            }
            let host = ClosureHandler { request, channel in
                guard case .host(.navigate(_, let route, _), _) = request else { return .status(.ok) }
                if route == "tick" { return .status(IsolationStatus(code: 0, message: "tick")) }
                if route == "nest" {
                    let worked = try? channel.call(.action(instance: 1, name: "work", payload: []), timeout: .seconds(60))
                    return .status(IsolationStatus(code: 0, message: worked?.status.message ?? "cut"))
                }
                // The host answering its plugin slowly: longer than the plugin's whole budget.
                Thread.sleep(forTimeInterval: 2.5)
                return .status(IsolationStatus(code: 0, message: "the host"))
            }
            near.handler = host
            near.callBudget = CallBudget(maximumNestedRequests: 10, maximumDuration: .seconds(2))
            let answered = try near.call(.action(instance: 1, name: "slow", payload: []), timeout: .seconds(60))
            #expect(answered.status.message == "answered: the host")
            func pastBudget(_ error: any Error) -> Bool {
                (error as? ChannelError)?.code == .timedOut && (error as? ChannelError)?.message.contains("ran past its budget") == true
            }
            // The worker's time in the host's call back to it counts: that call is cut.
            switch Result(catching: { try near.call(.action(instance: 1, name: "nested", payload: []), timeout: .seconds(60)) }) {
            case .success(let reply): #expect(reply.status.message == "answered: cut")
            case .failure(let error): #expect(pastBudget(error), "\(error)")
            }
            #expect { try near.call(.action(instance: 1, name: "spin", payload: []), timeout: .seconds(60)) } throws: { pastBudget($0) }
            near.close()
            far.waitUntilStopped()
        }

        @Test("multi-megabyte payloads cross in both directions")
        func largePayloads() throws {
            let (near, far) = try ChannelPair.make { request, _ in
                guard case .action(_, _, let payload) = request else { return .status(.ok) }
                return .bytes(.ok, payload.reversed())
            }
            let payload = (0..<(8 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 9) }
            let reply = try near.call(.action(instance: 1, name: "echo", payload: payload))
            guard case .bytes(_, let bytes) = reply else { throw TestFailure("no bytes came back") }
            #expect(bytes.count == payload.count)
            #expect(bytes == Array(payload.reversed()))
            near.close()
            far.waitUntilStopped()
        }

        @Test("notifications from many threads arrive whole and in each thread's order")
        func concurrentNotifications() throws {
            let (nearEnd, farEnd) = try IsolationChannel.makeSocketPair()
            let near = try IsolationChannel(fileDescriptor: nearEnd, peer: "far")
            let far = try IsolationChannel(fileDescriptor: farEnd, peer: "near")
            let lines = Locked<[String]>([])
            let handler = ClosureHandler(notified: { notification in
                if case .log(_, _, let message) = notification { lines.withLock { $0.append(message) } }
            })
            near.handler = handler
            let threads = 8, each = 300
            for thread in 0..<threads {
                Thread.detachNewThread {
                    for index in 0..<each { try? far.notify(.log(level: 2, message: "\(thread):\(index):" + String(repeating: "x", count: index * 7))) }
                }
            }
            try eventually(timeout: .seconds(30), every: .zero) {
                try near.serveNext(timeout: .milliseconds(100))
                return lines.withLock { $0.count } >= threads * each
            }
            let received = lines.withLock { $0 }
            #expect(received.count == threads * each)
            for thread in 0..<threads {
                let indices = received.compactMap { line -> Int? in
                    let parts = line.split(separator: ":", omittingEmptySubsequences: false)
                    guard parts.count == 3, parts[0] == "\(thread)", let index = Int(parts[1]), parts[2].count == index * 7 else { return nil }
                    return index
                }
                #expect(indices == Array(0..<each), "thread \(thread)")
            }
        }

        @Test("a peer that goes away is a typed peer-closed error, never a trap")
        func peerGone() throws {
            let (nearEnd, farEnd) = try IsolationChannel.makeSocketPair()
            let near = try IsolationChannel(fileDescriptor: nearEnd, peer: "far")
            close(farEnd)
            #expect { try near.call(.unload()) } throws: { ($0 as? ChannelError)?.code == .peerClosed }
            #expect { try near.notify(.log(level: 0, message: "late")) } throws: { ($0 as? ChannelError)?.code == .peerClosed }
            #expect { try near.serveNext(timeout: .milliseconds(10)) } throws: { ($0 as? ChannelError)?.code == .peerClosed }

            let (ownEnd, otherEnd) = try IsolationChannel.makeSocketPair()
            defer { close(otherEnd) }
            let closed = try IsolationChannel(fileDescriptor: ownEnd, peer: "other")
            closed.close()
            #expect { try closed.call(.unload()) } throws: { ($0 as? ChannelError)?.code == .closed }
        }

        @Test("a corrupt frame is a typed malformed error")
        func corruptFrame() throws {
            let (nearEnd, farEnd) = try IsolationChannel.makeSocketPair()
            defer { close(farEnd) }
            let near = try IsolationChannel(fileDescriptor: nearEnd, peer: "far")
            let garbage: [UInt8] = [5, 0, 0, 0, 1, 2, 3, 4, 5]
            #expect(garbage.withUnsafeBytes { write(farEnd, $0.baseAddress, $0.count) } == garbage.count)
            #expect { try near.serveNext(timeout: .seconds(5)) } throws: { error in
                let error = error as? ChannelError
                return error?.code == .malformed && error?.message.contains("frame length 5") == true
            }
        }

        @Test("an unanswered call times out; its late reply is dropped and the next call gets its own")
        func timeoutThenLateReply() throws {
            let (nearEnd, farEnd) = try IsolationChannel.makeSocketPair()
            let near = try IsolationChannel(fileDescriptor: nearEnd, peer: "far")
            #expect { try near.call(.activate(instance: 1), timeout: .milliseconds(100)) } throws: { ($0 as? ChannelError)?.code == .timedOut }
            let far = try ServedPeer(descriptor: farEnd) { request, _ in
                guard case .activate(let instance) = request else { return .status(.ok) }
                return .status(IsolationStatus(code: 0, message: "activated \(instance)"))
            }
            #expect(try near.call(.activate(instance: 2)).status.message == "activated 2")
            near.close()
            far.waitUntilStopped()
        }

        @Test("notifications the peer sent right after its reply, taken in by the same read, are delivered before the call returns; a request after them waits for the serving loop")
        func framesReadPastReply() throws {
            let (nearEnd, farEnd) = try IsolationChannel.makeSocketPair()
            defer { close(farEnd) }
            let near = try IsolationChannel(fileDescriptor: nearEnd, peer: "far")
            let heard = Locked<[String]>([])
            let handler = ClosureHandler(requested: { request, _ in
                if case .activate(let instance) = request { heard.withLock { $0.append("request \(instance)") } }
                return .status(.ok)
            }, notified: { notification in
                if case .log(_, _, let message) = notification { heard.withLock { $0.append(message) } }
            })
            near.handler = handler  // held weakly: kept alive to the end below
            // The far side answers call 1, logs twice and asks something back, in one write.
            let reply = IsolationReply.status(IsolationStatus(code: 0, message: "done"))
            let logs = ["first log", "second log"].map { IsolationNotification.log(level: 2, message: $0) }
            let request = IsolationRequest.activate(instance: 9)
            let bytes = Frame.encode(kind: .reply, op: reply.op, callID: 1) { reply.write(to: &$0) }
                + logs.flatMap { log in Frame.encode(kind: .notification, op: log.op, callID: 0) { log.write(to: &$0) } }
                + Frame.encode(kind: .request, op: request.op, callID: 1) { request.write(to: &$0) }
            #expect(bytes.withUnsafeBytes { write(farEnd, $0.baseAddress, $0.count) } == bytes.count)
            #expect(try near.call(.activate(instance: 1), timeout: .seconds(30)).status.message == "done")
            #expect(heard.withLock { $0 } == ["first log", "second log"])
            var unread = pollfd(fd: nearEnd, events: Int16(POLLIN), revents: 0)
            #expect(poll(&unread, 1, 0) == 0, "a watcher of the socket has nothing to report")
            #expect(try near.serveAvailable() == 1)
            #expect(heard.withLock { $0 } == ["first log", "second log", "request 9"])
            withExtendedLifetime(handler) { near.close() }
        }

        // How long a round trip takes is a benchmark's question (P8 in scripts/bench), not a test's.
        @Test("20,000 round trips in a row are each answered, in order, by the request they answer")
        func roundTrips() throws {
            let (near, far) = try ChannelPair.make { request, _ in
                guard case .activate(let instance) = request else { return .status(.ok) }
                return .status(IsolationStatus(code: 0, message: "\(instance)"))
            }
            for instance in 0..<20_000 {
                let message = try near.call(.activate(instance: UInt64(instance))).status.message
                guard message == "\(instance)" else {
                    Issue.record("call \(instance) was answered with '\(message)'")
                    break
                }
            }
            near.close()
            far.waitUntilStopped()
        }
    }
}

/// A handler made of closures, for one test's side of a channel.
final class ClosureHandler: IsolationChannelHandler {
    let requested: @Sendable (IsolationRequest, IsolationChannel) -> IsolationReply
    let notified: @Sendable (IsolationNotification) -> Void

    init(requested: @escaping @Sendable (IsolationRequest, IsolationChannel) -> IsolationReply = { _, _ in .status(.ok) },
         notified: @escaping @Sendable (IsolationNotification) -> Void = { _ in }) {
        self.requested = requested
        self.notified = notified
    }

    func handle(_ request: IsolationRequest, on channel: IsolationChannel) -> IsolationReply { requested(request, channel) }
    func receive(_ notification: IsolationNotification, on channel: IsolationChannel) { notified(notification) }
}

/// The far end of a channel, served on a thread of its own until the near end closes.
final class ServedPeer: Sendable {
    let channel: IsolationChannel
    private let handler: ClosureHandler
    private let stopped = DispatchSemaphore(value: 0)

    init(descriptor: Int32, respond: @escaping @Sendable (IsolationRequest, IsolationChannel) -> IsolationReply) throws {
        channel = try IsolationChannel(fileDescriptor: descriptor, peer: "near")
        handler = ClosureHandler(requested: respond)
        channel.handler = handler
        Thread.detachNewThread { [self] in
            while (try? channel.serveNext()) != nil {}
            stopped.signal()
        }
    }

    func waitUntilStopped() { stopped.wait() }
}

enum ChannelPair {
    /// A near channel for the test's thread and a far one served by `respond`.
    static func make(respond: @escaping @Sendable (IsolationRequest, IsolationChannel) -> IsolationReply) throws -> (IsolationChannel, ServedPeer) {
        let (nearEnd, farEnd) = try IsolationChannel.makeSocketPair()
        return (try IsolationChannel(fileDescriptor: nearEnd, peer: "far"), try ServedPeer(descriptor: farEnd, respond: respond))
    }
}
