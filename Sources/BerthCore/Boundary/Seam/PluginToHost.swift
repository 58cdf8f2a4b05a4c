package import CBerth

/// A plugin's call into the host, in Swift values: one case per `berth_host_v1` function
/// the host answers. `HostAdapter` makes it from the C call; a transport carries it (in
/// process to the main actor, from a worker over the channel as `IsolationRequest.host`);
/// `HostCallbackHandler.answer` answers it with a `HostAnswer`. The caller (a screen, or
/// for the plugin-wide calls the plugin) travels beside it.
package enum PluginToHost: Sendable, Equatable {
    /// Answer: `.screen` (the id promised for a push or present).
    case navigate(kind: Int32, route: String?, argument: [UInt8])
    case observeDelegate(child: UInt64)
    case sendDelegate(action: String, payload: [UInt8])
    case contextObserve(type: String)
    case contextUnobserve(type: String)
    case contextSend(type: String, payload: [UInt8], mode: Int32)
    /// Answer: `.flag`.
    case contextCanTerminate(type: String)
    /// Answer: `.bytes`. In a worker, during a render the render's batch answers instead.
    case stateRead(key: IsolationSlotKey, fingerprint: UInt64)
    /// In a worker, during a render the batch takes it; between renders it is one-way
    /// (`IsolationNotification.stateWrite`).
    case stateWrite(slot: IsolationStateSlot)
    /// Answer: `.bytes`.
    case persistRead(key: String)
    case persistWrite(key: String, value: [UInt8])
    /// Plugin-wide.
    case sessionBegin(id: String)
    /// Plugin-wide.
    case sessionEnd
    /// Plugin-wide, from a worker only: its `berth_service_v1` stays there as `service`
    /// (in process the declaration itself is registered, `InProcessTransport`).
    case serviceRegister(key: String, kind: Int32, service: UInt64, answersCalls: Bool)
    /// From a worker only. Answer: `.instance` the host's scope holds.
    case serviceResolve(key: String)
    /// Answer: `.bytes`, the contract's reply (answered off the main actor).
    case serviceCall(key: String, request: [UInt8])

    /// The berth.h function's name, for errors ("persist_write").
    package var name: String {
        switch self {
        case .navigate: "navigate"
        case .observeDelegate: "observe_delegate"
        case .sendDelegate: "send_delegate"
        case .contextObserve: "context_observe"
        case .contextUnobserve: "context_unobserve"
        case .contextSend: "context_send"
        case .contextCanTerminate: "context_can_terminate"
        case .stateRead: "state_read"
        case .stateWrite: "state_write"
        case .persistRead: "persist_read"
        case .persistWrite: "persist_write"
        case .sessionBegin: "session_begin"
        case .sessionEnd: "session_end"
        case .serviceRegister: "service_register"
        case .serviceResolve: "service_resolve"
        case .serviceCall: "service_call"
        }
    }

    /// True for the calls made with a plugin handle (the caller is a plugin, not a screen).
    package var isPluginWide: Bool {
        switch self {
        case .sessionBegin, .sessionEnd, .serviceRegister: true
        default: false
        }
    }

    /// "persist_write: the screen handle is not an open screen" (the service calls name their key).
    package var notOpen: HostRefusal {
        switch self {
        case .serviceResolve(let key), .serviceCall(let key, _): HostRefusal(.notFound, "\(name) \(key): the screen handle is not an open screen")
        default: HostRefusal(.notFound, "\(name): the screen handle is not an open screen")
        }
    }

    /// The answer when the caller's handle names no open screen (or no loaded plugin).
    package var whenNotOpen: HostAnswer {
        switch self {
        case .contextUnobserve: .done
        case .contextCanTerminate: .flag(false)
        case .sessionBegin, .sessionEnd, .serviceRegister: .refused(HostRefusal(.notFound, "\(name): the plugin handle is not a loaded plugin"))
        default: .refused(notOpen)
        }
    }

    // MARK: Wire (inside `IsolationRequest.host`; the caller's u64 is written first)

    /// The op code on the wire: 32-99 (`IsolationRequest` reads that range as `.host`).
    package var op: UInt16 {
        switch self {
        case .navigate: 32
        case .observeDelegate: 33
        case .sendDelegate: 34
        case .contextObserve: 35
        case .contextUnobserve: 36
        case .contextSend: 37
        case .contextCanTerminate: 38
        case .stateRead: 39
        case .stateWrite: 40
        case .persistRead: 41
        case .persistWrite: 42
        case .sessionBegin: 43
        case .sessionEnd: 44
        case .serviceRegister: 45
        case .serviceResolve: 46
        case .serviceCall: 47
        }
    }

    /// A capacity hint for the encoder.
    package var encodedSizeHint: Int {
        switch self {
        case .sendDelegate(let name, let bytes), .contextSend(let name, let bytes, _), .persistWrite(let name, let bytes),
             .serviceCall(let name, let bytes):
            32 + name.utf8.count + bytes.count
        case .navigate(_, _, let bytes): 64 + bytes.count
        case .stateWrite(let slot): 32 + slot.key.identity.utf8.count + slot.bytes.count
        default: 64
        }
    }

    package func write(to writer: inout WireWriter) {
        switch self {
        case .navigate(let kind, let route, let argument): writer.i32(kind); writer.optionalString(route); writer.data(argument)
        case .observeDelegate(let child): writer.u64(child)
        case .sendDelegate(let action, let payload): writer.string(action); writer.data(payload)
        case .contextObserve(let type), .contextUnobserve(let type), .contextCanTerminate(let type): writer.string(type)
        case .contextSend(let type, let payload, let mode): writer.string(type); writer.data(payload); writer.i32(mode)
        case .stateRead(let key, let fingerprint): key.write(to: &writer); writer.u64(fingerprint)
        case .stateWrite(let slot): slot.write(to: &writer)
        case .persistRead(let key), .serviceResolve(let key): writer.string(key)
        case .persistWrite(let key, let value): writer.string(key); writer.data(value)
        case .sessionBegin(let id): writer.string(id)
        case .sessionEnd: break
        case .serviceRegister(let key, let kind, let service, let answersCalls):
            writer.string(key); writer.i32(kind); writer.u64(service); writer.bool(answersCalls)
        case .serviceCall(let key, let request): writer.string(key); writer.data(request)
        }
    }

    /// Decodes the body after the caller; nil for an op that is not a plugin → host call.
    package static func read(op: UInt16, from reader: inout WireReader) throws(WireDecodingError) -> PluginToHost? {
        switch op {
        case 32: .navigate(kind: try reader.i32(), route: try reader.optionalString(), argument: try reader.data())
        case 33: .observeDelegate(child: try reader.u64())
        case 34: .sendDelegate(action: try reader.string(), payload: try reader.data())
        case 35: .contextObserve(type: try reader.string())
        case 36: .contextUnobserve(type: try reader.string())
        case 37: .contextSend(type: try reader.string(), payload: try reader.data(), mode: try reader.i32())
        case 38: .contextCanTerminate(type: try reader.string())
        case 39: .stateRead(key: try IsolationSlotKey.read(from: &reader), fingerprint: try reader.u64())
        case 40: .stateWrite(slot: try IsolationStateSlot.read(from: &reader))
        case 41: .persistRead(key: try reader.string())
        case 42: .persistWrite(key: try reader.string(), value: try reader.data())
        case 43: .sessionBegin(id: try reader.string())
        case 44: .sessionEnd
        case 45: .serviceRegister(key: try reader.string(), kind: try reader.i32(), service: try reader.u64(), answersCalls: try reader.bool())
        case 46: .serviceResolve(key: try reader.string())
        case 47: .serviceCall(key: try reader.string(), request: try reader.data())
        default: nil
        }
    }
}

/// The host's answer to a `PluginToHost`, in the few shapes berth.h's out-parameters take.
package enum HostAnswer: Sendable, Equatable {
    case done
    case refused(HostRefusal)
    /// Bytes for the plugin's sink; nil: nothing there (`BERTH_ERR_NOT_FOUND`, no message).
    case bytes([UInt8]?)
    /// `navigate`'s promised screen id (nil for pop, dismiss, pop to root).
    case screen(UInt64?)
    case flag(Bool)
    /// A worker's service instance token (`service_resolve`).
    case instance(UInt64)

    /// `.done` or the refusal.
    package init(_ result: Result<Void, HostRefusal>) {
        switch result {
        case .success: self = .done
        case .failure(let refusal): self = .refused(refusal)
        }
    }

    /// The refusal, if the host refused.
    package var refusal: HostRefusal? {
        if case .refused(let refusal) = self { return refusal }
        return nil
    }

    /// The answer on the wire: the reply shapes a worker has always read.
    package var reply: IsolationReply {
        switch self {
        case .done: .status(.ok)
        case .refused(let refusal): .status(IsolationStatus(code: refusal.code.rawValue, message: refusal.message))
        case .bytes(let bytes?): .bytes(.ok, bytes)
        case .bytes(nil): .bytes(IsolationStatus(code: Int32(BERTH_ERR_NOT_FOUND)), [])
        case .screen(let id): .navigated(.ok, screen: id ?? 0)
        case .flag(let value): .flag(value)
        case .instance(let token): .created(.ok, instance: token)
        }
    }

    /// A reply read back (any failing status is a refusal; a bare not-found is "nothing there").
    package init(_ reply: IsolationReply) {
        let status = reply.status
        if case .bytes = reply, status.code == Int32(BERTH_ERR_NOT_FOUND), status.message.isEmpty {
            self = .bytes(nil)
            return
        }
        guard status.isOK else {
            self = .refused(HostRefusal(HostRefusal.Code(rawValue: status.code) ?? .failed, status.message))
            return
        }
        switch reply {
        case .bytes(_, let bytes): self = .bytes(bytes)
        case .navigated(_, let id): self = .screen(id == 0 ? nil : id)
        case .flag(let value): self = .flag(value)
        case .created(_, let token): self = .instance(token)
        default: self = .done
        }
    }
}

extension Result where Success == HostAnswer, Failure == HostRefusal {
    /// The answer, a refusal included.
    package var answer: HostAnswer {
        switch self {
        case .success(let answer): answer
        case .failure(let refusal): .refused(refusal)
        }
    }
}
