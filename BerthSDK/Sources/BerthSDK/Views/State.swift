internal import CBerth

/// Local view state that lives in the host, not in the view value.
///
/// Self-hydrating, as in the seed: when a `@State` is created while a `body` is being
/// evaluated during a render pass, it takes the next property index of that body's
/// identity and reads its value from the host's state storage (or starts from its
/// default). Writes go straight to the host. Created outside a render (a test, a screen's
/// own stored property) it is a plain local box.
@propertyWrapper
public struct State<Value: StateCodable> {
    let box: StateBox<Value>

    public init(wrappedValue: Value) {
        box = StateBox(hydrating: StateRegistration.claimSlot(), default: wrappedValue)
    }

    public var wrappedValue: Value {
        get { box.value }
        nonmutating set { box.set(newValue) }
    }

    /// A binding for controls (`$count`).
    public var projectedValue: Binding<Value> {
        Binding(get: { box.value }, set: { box.set($0) })
    }
}

/// A read-write reference to a value owned elsewhere (a `@State`).
public struct Binding<Value> {
    private let getter: () -> Value
    private let setter: (Value) -> Void

    public init(get: @escaping () -> Value, set: @escaping (Value) -> Void) {
        getter = get
        setter = set
    }

    public var wrappedValue: Value {
        get { getter() }
        nonmutating set { setter(newValue) }
    }

    /// A binding to a fixed value that ignores writes.
    public static func constant(_ value: Value) -> Binding<Value> {
        Binding(get: { value }, set: { _ in })
    }
}

/// Where a hydrated `@State` lives in the host: its screen, identity and property index.
struct StateSlot {
    let screen: OpaquePointer?
    let identity: String
    let index: UInt32
}

/// The value of one `@State`, cached in the view value and written through to the host.
final class StateBox<Value: StateCodable> {
    private(set) var value: Value
    let slot: StateSlot?

    init(hydrating slot: StateSlot?, default value: Value) {
        self.slot = slot
        self.value = value
        guard let slot else { return }
        if let bytes = HostState.read(slot, fingerprint: Value.stateFingerprint), let stored = Value(stateBytes: bytes) {
            self.value = stored
        }
    }

    func set(_ newValue: Value) {
        value = newValue
        guard let slot else { return }
        HostState.write(slot, fingerprint: Value.stateFingerprint, bytes: newValue.stateBytes)
    }
}

/// The hydration context: which body is being evaluated, and the next property index.
enum StateRegistration {
    private final class Context {
        let identity: String
        let screen: OpaquePointer?
        var counter: UInt32 = 0
        init(identity: String, screen: OpaquePointer?) {
            self.identity = identity
            self.screen = screen
        }
    }

    // Render passes run on the host's main thread only (berth.h), so one active context
    // per plugin image is enough; nested bodies save and restore it.
    nonisolated(unsafe) private static var active: Context?

    /// Runs `body` (a view's `body`, a `ForEach` row) with the context at `identity`.
    static func hydrating<T>(identity: String, screen: OpaquePointer?, _ body: () -> T) -> T {
        let previous = active
        active = Context(identity: identity, screen: screen)
        defer { active = previous }
        return body()
    }

    /// The next slot of the active context, or nil outside a render.
    static func claimSlot() -> StateSlot? {
        guard let context = active else { return nil }
        defer { context.counter += 1 }
        return StateSlot(screen: context.screen, identity: context.identity, index: context.counter)
    }

    /// The screen being rendered, if any (for `@Persisted` on views).
    static var activeScreen: OpaquePointer? { active?.screen }
}

/// The host's state storage, through the ABI.
enum HostState {
    static func read(_ slot: StateSlot, fingerprint: UInt64) -> [UInt8]? {
        guard let read = PluginRuntime.shared.hostFunction(\.state_read) else { return nil }
        var collector = ByteCollector()
        let status = collector.collect { sink in read(slot.screen, slot.identity, slot.index, fingerprint, sink, nil) }
        return status == BERTH_OK ? collector.bytes : nil
    }

    static func write(_ slot: StateSlot, fingerprint: UInt64, bytes: [UInt8]) {
        guard let write = PluginRuntime.shared.hostFunction(\.state_write) else { return }
        var error = berth_error()
        error.struct_size = UInt32(MemoryLayout<berth_error>.size)
        let status = bytes.withUnsafeBufferPointer { buffer in
            write(slot.screen, slot.identity, slot.index, fingerprint, berth_bytes(data: buffer.baseAddress, length: UInt64(buffer.count)), &error)
        }
        if status != BERTH_OK {
            Plugin.log("state \(slot.identity)[\(slot.index)] not written: status \(status)", level: .error)
        }
    }
}

/// Gathers what a host function writes into a `berth_sink`.
struct ByteCollector {
    private(set) var bytes: [UInt8] = []

    mutating func collect(_ call: (UnsafePointer<berth_sink>) -> berth_status) -> berth_status {
        withUnsafeMutablePointer(to: &bytes) { storage in
            var sink = berth_sink()
            sink.struct_size = UInt32(MemoryLayout<berth_sink>.size)
            sink.context = UnsafeMutableRawPointer(storage)
            sink.write = { context, data, length in
                guard let context else { return berth_status(BERTH_ERR_INVALID_ARGUMENT) }
                let bytes = context.assumingMemoryBound(to: [UInt8].self)
                if let data, length > 0 { bytes.pointee.append(contentsOf: UnsafeBufferPointer(start: data, count: Int(length))) }
                return berth_status(BERTH_OK)
            }
            return withUnsafePointer(to: &sink) { call($0) }
        }
    }
}
