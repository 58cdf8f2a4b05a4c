import Foundation
import Glibc
import Testing
@_spi(Engine) @testable import BerthRuntime

/// What a peer can make the channel hold (Docs/security.md, "Bounded input").
extension IsolationWorkerTests.Channel {
    @Test("a frame announcing more than its op may carry is refused when its header arrives, not after its body")
    func frameLimitOnHeader() throws {
        let (near, far) = try IsolationChannel.makeSocketPair()
        defer { close(far) }
        let channel = try IsolationChannel(fileDescriptor: near, peer: "test")
        // A reply of an op no side knows, announcing 32 MiB; no body follows.
        var header: [UInt8] = []
        withUnsafeBytes(of: UInt32(11 + (32 << 20)).littleEndian) { header += $0 }
        header.append(2)
        withUnsafeBytes(of: UInt16(999).littleEndian) { header += $0 }
        withUnsafeBytes(of: UInt64(1).littleEndian) { header += $0 }
        #expect(write(far, header, header.count) == header.count)
        #expect {
            try channel.serveNext(timeout: .seconds(5))
        } throws: { error in
            (error as? ChannelError)?.code == .malformed && "\(error)".contains("over its limit of 1048576")
        }
    }

    @Test("a frame larger than the receive buffer arrives whole")
    func largeFrameArrivesWhole() throws {
        let (near, far) = try IsolationChannel.makeSocketPair()
        let caller = try IsolationChannel(fileDescriptor: near, peer: "worker")
        let server = try IsolationChannel(fileDescriptor: far, peer: "host")
        let bytes = (0..<(5 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        let handler = FixedReply(.bytes(.ok, bytes))
        server.handler = handler
        let thread = Thread { _ = try? server.serveNext(timeout: .seconds(20)) }
        thread.start()
        #expect(try caller.call(.saveState(instance: 1), timeout: .seconds(20)) == .bytes(.ok, bytes))
    }
}

/// Answers every request with one reply.
private final class FixedReply: IsolationChannelHandler {
    let reply: IsolationReply
    init(_ reply: IsolationReply) { self.reply = reply }
    func handle(_ request: IsolationRequest, on channel: IsolationChannel) -> IsolationReply { reply }
    func receive(_ notification: IsolationNotification, on channel: IsolationChannel) {}
}
