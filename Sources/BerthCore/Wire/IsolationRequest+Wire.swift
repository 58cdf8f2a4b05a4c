extension IsolationRequest {
    package func write(to writer: inout WireWriter) {
        switch self {
        case .hello(let hello): hello.write(to: &writer)
        case .create(let plugin, let screen, let route, let argument):
            writer.u64(plugin); writer.u64(screen); writer.string(route); writer.data(argument)
        case .destroy(let instance), .activate(let instance), .deactivate(let instance), .saveState(let instance),
             .serviceCreate(let instance), .serviceRelease(let instance):
            writer.u64(instance)
        case .screenEvent(let instance, let event, let flag):
            writer.u64(instance); writer.i32(event); writer.bool(flag)
        case .action(let instance, let name, let payload):
            writer.u64(instance); writer.string(name); writer.data(payload)
        case .actionThenRender(let instance, let name, let payload, let slots):
            writer.u64(instance); writer.string(name); writer.data(payload); writer.list(slots) { $1.write(to: &$0) }
        case .delegateReceived(let instance, let child, let name, let payload):
            writer.u64(instance); writer.u64(child); writer.string(name); writer.data(payload)
        case .contextReceived(let instance, let type, let payload):
            writer.u64(instance); writer.string(type); writer.data(payload)
        case .render(let instance, let slots):
            writer.u64(instance); writer.list(slots) { $1.write(to: &$0) }
        case .renderTree(let instance, let slots):
            writer.u64(instance); writer.list(slots) { $1.write(to: &$0) }
        case .restoreState(let instance, let state):
            writer.u64(instance); writer.data(state)
        case .shutdown, .usage: break
        case .unload(let plugin): writer.u64(plugin)
        case .callExport(let plugin, let symbol, let arguments):
            writer.u64(plugin); writer.string(symbol); writer.list(arguments) { $1.write(to: &$0) }
        case .serviceInvoke(let instance, let request):
            writer.u64(instance); writer.data(request)
        case .host(let call, let caller):
            writer.u64(caller); call.write(to: &writer)
        }
    }

    /// Decodes a request body; nil for an op this side does not know (answered as unsupported).
    package static func read(op: UInt16, from reader: inout WireReader) throws(WireDecodingError) -> IsolationRequest? {
        let request: IsolationRequest
        switch op {
        case 1: request = .hello(try WorkerHello.read(from: &reader))
        case 2: request = .create(plugin: try reader.u64(), screen: try reader.u64(), route: try reader.string(), argument: try reader.data())
        case 3: request = .destroy(instance: try reader.u64())
        case 4: request = .activate(instance: try reader.u64())
        case 5: request = .deactivate(instance: try reader.u64())
        case 6: request = .screenEvent(instance: try reader.u64(), event: try reader.i32(), flag: try reader.bool())
        case 7: request = .action(instance: try reader.u64(), name: try reader.string(), payload: try reader.data())
        case 8:
            request = .delegateReceived(instance: try reader.u64(), child: try reader.u64(), name: try reader.string(), payload: try reader.data())
        case 9: request = .contextReceived(instance: try reader.u64(), type: try reader.string(), payload: try reader.data())
        case 10:
            let instance = try reader.u64()
            let slots = try reader.list(minimumElementSize: IsolationStateSlot.minimumWireSize) { reader throws(WireDecodingError) in
                try IsolationStateSlot.read(from: &reader)
            }
            request = .render(instance: instance, slots: slots)
        case 11: request = .saveState(instance: try reader.u64())
        case 12: request = .restoreState(instance: try reader.u64(), state: try reader.data())
        case 13: request = .unload(plugin: try reader.u64())
        case 14:
            let plugin = try reader.u64()
            let symbol = try reader.string()
            let arguments = try reader.list(minimumElementSize: 1) { reader throws(WireDecodingError) in try FFIValue.read(from: &reader) }
            request = .callExport(plugin: plugin, symbol: symbol, arguments: arguments)
        case 15: request = .shutdown
        case 16:
            let instance = try reader.u64()
            request = .renderTree(instance: instance, slots: try Self.renderSlots(from: &reader))
        case 17: request = .usage
        case 19: request = .serviceCreate(service: try reader.u64())
        case 20: request = .serviceRelease(instance: try reader.u64())
        case 21: request = .serviceInvoke(instance: try reader.u64(), request: try reader.data())
        case 18:
            let (instance, name, payload) = (try reader.u64(), try reader.string(), try reader.data())
            request = .actionThenRender(instance: instance, name: name, payload: payload, slots: try Self.renderSlots(from: &reader))
        case 32..<100:
            // Ops 32-99 are the plugin → host calls (`PluginToHost.op`), after their caller.
            let caller = try reader.u64()
            guard let call = try PluginToHost.read(op: op, from: &reader) else { return nil }
            request = .host(call, caller: caller)
        default: return nil
        }
        try reader.finish()
        return request
    }

    private static func renderSlots(from reader: inout WireReader) throws(WireDecodingError) -> [RenderSlot] {
        try reader.list(minimumElementSize: RenderSlot.minimumWireSize) { reader throws(WireDecodingError) in try RenderSlot.read(from: &reader) }
    }
}
