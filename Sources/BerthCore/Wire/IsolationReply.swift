package import CBerth

/// A reply to an `IsolationRequest`. Any request may be answered with `.status` carrying a
/// failure instead of its usual reply (an unknown instance, a call refused in the current
/// state, a request the other side cannot decode); `status` reads it from every case.
package enum IsolationReply: Sendable, Equatable {
    /// The outcome of a call with no other result.
    case status(IsolationStatus)
    /// The library loaded and passed the handshake.
    case hello(WorkerHandshake)
    /// The library could not be loaded or failed the handshake.
    case helloFailed(LoaderError)
    /// `create`'s outcome and, on success, the worker's token for the instance.
    case created(IsolationStatus, instance: UInt64)
    case rendered(IsolationRenderResult)
    /// `actionThenRender`'s outcome: the action's status and, when the worker rendered after
    /// it, that render's result, a failure included (nil: the host renders as usual).
    case acted(IsolationStatus, render: IsolationRenderResult?)
    /// A status and the bytes written to the sink (save_state, state_read, persist_read).
    case bytes(IsolationStatus, [UInt8])
    /// `navigate`'s outcome and the screen id promised for a push or present (else 0).
    case navigated(IsolationStatus, screen: UInt64)
    /// A yes/no answer (`context_can_terminate`).
    case flag(Bool)
    case exported(FFIValue)
    case exportFailed(FFIError)
    /// The answer to `.usage`.
    case usage(PluginResourceUsage)

    /// The status this reply carries (`.ok` for results that cannot fail).
    package var status: IsolationStatus {
        switch self {
        case .status(let status), .created(let status, _), .bytes(let status, _), .navigated(let status, _), .acted(let status, _): status
        case .rendered(let result): result.status
        case .hello, .flag, .exported, .usage: .ok
        case .helloFailed(let error): .failure(Int(BERTH_ERR_FAILED), error.message)
        case .exportFailed(let error): .failure(Int(BERTH_ERR_INVALID_ARGUMENT), error.message)
        }
    }

    package var op: UInt16 {
        switch self {
        case .status: 100
        case .hello: 101
        case .helloFailed: 102
        case .created: 103
        case .rendered: 104
        case .bytes: 105
        case .navigated: 106
        case .flag: 107
        case .exported: 108
        case .exportFailed: 109
        case .usage: 110
        case .acted: 111
        }
    }

    package var encodedSizeHint: Int {
        switch self {
        case .rendered(let result):
            64 + result.tree.count + result.readSlots.count * 4
                + result.readMissing.reduce(0) { $0 + 8 + $1.identity.utf8.count }
                + result.writes.reduce(0) { $0 + IsolationStateSlot.minimumWireSize + $1.key.identity.utf8.count + $1.bytes.count }
        case .bytes(let status, let bytes): 16 + status.message.utf8.count + bytes.count
        case .acted(let status, let render): 32 + status.message.utf8.count + (render.map { 32 + $0.status.message.utf8.count + $0.tree.count } ?? 0)
        default: 64
        }
    }

    package func write(to writer: inout WireWriter) {
        switch self {
        case .status(let status): status.write(to: &writer)
        case .hello(let handshake): handshake.write(to: &writer)
        case .helloFailed(let error): error.write(to: &writer)
        case .created(let status, let instance): status.write(to: &writer); writer.u64(instance)
        case .rendered(let result): result.write(to: &writer)
        case .bytes(let status, let bytes): status.write(to: &writer); writer.data(bytes)
        case .navigated(let status, let screen): status.write(to: &writer); writer.u64(screen)
        case .flag(let value): writer.bool(value)
        case .exported(let value): value.write(to: &writer)
        case .exportFailed(let error): error.write(to: &writer)
        case .usage(let usage): writer.u64(usage.heapBytes); writer.u64(usage.cpuNanoseconds)
        case .acted(let status, let render):
            status.write(to: &writer)
            writer.bool(render != nil)
            render?.write(to: &writer)
        }
    }

    package static func read(op: UInt16, from reader: inout WireReader) throws(WireDecodingError) -> IsolationReply {
        let reply: IsolationReply
        switch op {
        case 100: reply = .status(try IsolationStatus.read(from: &reader))
        case 101: reply = .hello(try WorkerHandshake.read(from: &reader))
        case 102: reply = .helloFailed(try LoaderError.read(from: &reader))
        case 103: reply = .created(try IsolationStatus.read(from: &reader), instance: try reader.u64())
        case 104: reply = .rendered(try IsolationRenderResult.read(from: &reader))
        case 105: reply = .bytes(try IsolationStatus.read(from: &reader), try reader.data())
        case 106: reply = .navigated(try IsolationStatus.read(from: &reader), screen: try reader.u64())
        case 107: reply = .flag(try reader.bool())
        case 108: reply = .exported(try FFIValue.read(from: &reader))
        case 109: reply = .exportFailed(try FFIError.read(from: &reader))
        case 110: reply = .usage(PluginResourceUsage(heapBytes: try reader.u64(), cpuNanoseconds: try reader.u64()))
        case 111:
            let status = try IsolationStatus.read(from: &reader)
            reply = .acted(status, render: try reader.bool() ? try IsolationRenderResult.read(from: &reader) : nil)
        default: throw WireDecodingError(detail: "unknown reply op \(op)")
        }
        try reader.finish()
        return reply
    }
}
