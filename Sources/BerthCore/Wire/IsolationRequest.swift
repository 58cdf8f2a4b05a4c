/// A request over the channel. The first group goes host → worker (the `berth_plugin_v1`
/// table and the exports); `.host` goes worker → host (the `berth_host_v1` functions a
/// plugin calls on its main thread, as `PluginToHost`). Instances are named by the worker's token from
/// `create`; screens by the host's screen id.
package enum IsolationRequest: Sendable, Equatable {
    // MARK: host → worker
    /// Load the library and handshake. Reply: `.hello` or `.helloFailed`.
    case hello(WorkerHello)
    /// `create` for `route` of plugin `plugin` (its hello's `member`); `screen` is the host's
    /// id for the new screen. Reply: `.created`.
    case create(plugin: UInt64 = 1, screen: UInt64, route: String, argument: [UInt8])
    /// Cancel the instance's tasks (deactivating it first if active), then `destroy`. Reply: `.status`.
    case destroy(instance: UInt64)
    case activate(instance: UInt64)
    /// `deactivate`; every managed task of the instance is cancelled and has returned
    /// before the reply. Reply: `.status`.
    case deactivate(instance: UInt64)
    /// A `BERTH_EVENT_*` with its flag. Reply: `.status`.
    case screenEvent(instance: UInt64, event: Int32, flag: Bool)
    case action(instance: UInt64, name: String, payload: [UInt8])
    /// `action`, then, when the action made no call back to the host, one `render_tree`
    /// pass of the same instance over `slots` (the screen's state, unchanged by the action),
    /// so the render that follows an action costs no round trip of its own. Reply: `.acted`.
    case actionThenRender(instance: UInt64, name: String, payload: [UInt8], slots: [RenderSlot])
    case delegateReceived(instance: UInt64, child: UInt64, name: String, payload: [UInt8])
    case contextReceived(instance: UInt64, type: String, payload: [UInt8])
    /// One render pass; `state_read` is served from `slots`. Reply: `.rendered`.
    case render(instance: UInt64, slots: [IsolationStateSlot])
    /// One render pass through `render_tree`, the screen's slots in one batch. Reply:
    /// `.rendered` (the binary tree; its bitmap says which slots were used).
    case renderTree(instance: UInt64, slots: [RenderSlot])
    /// Reply: `.bytes`.
    case saveState(instance: UInt64)
    case restoreState(instance: UInt64, state: [UInt8])
    /// The plugin's `unload` (every instance must be destroyed first). Reply: `.status`.
    case unload(plugin: UInt64 = 1)
    /// An export through libffi. Reply: `.exported` or `.exportFailed`.
    case callExport(plugin: UInt64 = 1, symbol: String, arguments: [FFIValue])
    /// Reply `.status`, then the worker exits with status 0.
    case shutdown
    /// The worker's heap in use and CPU time (the conformance checks measure the plugin
    /// where it runs). Reply: `.usage`.
    case usage
    /// One instance from the `create` of the service the worker registered as `service`
    /// (the host's scope has none yet). Reply: `.created` with the instance's token.
    case serviceCreate(service: UInt64)
    /// The provider's `release` of instance `instance`: the host ended the scope holding it,
    /// or its provider is going. Reply: `.status`.
    case serviceRelease(instance: UInt64)
    /// One call of a contract service on a worker's instance: the request's JSON in, the
    /// result's JSON back (`bytes`).
    case serviceInvoke(instance: UInt64, request: [UInt8])

    // MARK: worker → host
    /// A plugin's call into the host (`PluginToHost`), made on the worker's main thread;
    /// `caller` is the host's screen id, or for a plugin-wide call the plugin's member.
    case host(PluginToHost, caller: UInt64)

    /// The op code on the wire.
    package var op: UInt16 {
        switch self {
        case .hello: 1
        case .create: 2
        case .destroy: 3
        case .activate: 4
        case .deactivate: 5
        case .screenEvent: 6
        case .action: 7
        case .actionThenRender: 18
        case .delegateReceived: 8
        case .contextReceived: 9
        case .render: 10
        case .renderTree: 16
        case .saveState: 11
        case .restoreState: 12
        case .unload: 13
        case .callExport: 14
        case .shutdown: 15
        case .usage: 17
        case .serviceCreate: 19
        case .serviceRelease: 20
        case .serviceInvoke: 21
        case .host(let call, _): call.op
        }
    }

    /// A short name for errors and logs ("render", "navigate").
    public var name: String {
        switch self {
        case .hello: "hello"
        case .create: "create"
        case .destroy: "destroy"
        case .activate: "activate"
        case .deactivate: "deactivate"
        case .screenEvent: "screen_event"
        case .action, .actionThenRender: "action"
        case .delegateReceived: "delegate_received"
        case .contextReceived: "context_received"
        case .render: "render"
        case .renderTree: "render_tree"
        case .saveState: "save_state"
        case .restoreState: "restore_state"
        case .unload: "unload"
        case .callExport: "call_export"
        case .shutdown: "shutdown"
        case .usage: "usage"
        case .serviceCreate: "service_create"
        case .serviceRelease: "service_release"
        case .serviceInvoke: "service_invoke"
        case .host(let call, _): call.name
        }
    }

    /// A capacity hint for the encoder (the big bodies are slots and payloads).
    package var encodedSizeHint: Int {
        switch self {
        case .render(_, let slots): slots.reduce(16) { $0 + IsolationStateSlot.minimumWireSize + $1.key.identity.utf8.count + $1.bytes.count }
        case .renderTree(_, let slots): Self.sizeHint(slots)
        case .actionThenRender(_, let name, let payload, let slots): Self.sizeHint(slots) + name.utf8.count + payload.count
        case .create(_, _, let route, let bytes): 32 + route.utf8.count + bytes.count
        case .action(_, let name, let bytes), .delegateReceived(_, _, let name, let bytes), .contextReceived(_, let name, let bytes):
            32 + name.utf8.count + bytes.count
        case .restoreState(_, let bytes): 64 + bytes.count
        case .host(let call, _): 8 + call.encodedSizeHint
        default: 64
        }
    }

    private static func sizeHint(_ slots: [RenderSlot]) -> Int {
        slots.reduce(32) { $0 + RenderSlot.minimumWireSize + ($1.identity?.utf8.count ?? 0) + $1.bytes.count }
    }
}
