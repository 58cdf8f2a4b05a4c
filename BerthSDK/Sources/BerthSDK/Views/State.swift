internal import CBerth

/// Local view state that lives in the host, not in the view value.
///
/// Keyed by the view's own structural identity: a `@State` is created unbound when its
/// view value is built, and the renderer binds it when it reaches that view in the tree,
/// to the slot (the view's identity, the property's index among the view's `@State`
/// properties). Binding reads the value from the host's state storage (or keeps the
/// default); writes go straight to the host. A view never rendered (a test, a screen's own
/// stored property) keeps a plain local value.
@propertyWrapper
public struct State<Value: StateCodable> {
    @usableFromInline let box: StateBox<Value>

    /// A state whose value is `wrappedValue` until the host has a stored one. Inlinable, so a
    /// view's `@State` is built by code specialized in the plugin (no generic metadata lookup
    /// per view per render pass).
    @inlinable
    public init(wrappedValue: Value) {
        box = StateBox(default: wrappedValue)
    }

    /// The current value. Setting it writes to the host once the view is bound.
    public var wrappedValue: Value {
        get { box.value }
        nonmutating set { box.set(newValue) }
    }

    /// A binding for controls (`$count`).
    public var projectedValue: Binding<Value> {
        Binding(get: { box.value }, set: { box.set($0) })
    }
}

extension State: StateProperty {
    static var _fingerprint: UInt64 { Value.stateFingerprint }
}

/// A read-write reference to a value owned elsewhere (a `@State`).
public struct Binding<Value> {
    private let getter: () -> Value
    private let setter: (Value) -> Void

    /// A binding that reads with `get` and writes with `set`.
    public init(get: @escaping () -> Value, set: @escaping (Value) -> Void) {
        getter = get
        setter = set
    }

    /// The referenced value; setting it calls the setter.
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
    /// The screen's identity paths and the view's id in them.
    let paths: IdentityPaths
    let id: UInt32
    let index: UInt32

    /// The view's identity path.
    var identity: String { paths[id] }
}

/// Where one `@State` is bound, apart from its value's type: the renderer binds every
/// `@State` of a view through this class, with no generic code per view.
@usableFromInline
class AnyStateBox {
    @exclusivity(unchecked) final private(set) var slot: StateSlot?

    @usableFromInline
    init() {}

    /// Binds to `slot` and takes the value stored there, if any (else keeps the default).
    final func bind(_ slot: StateSlot, stored: [UInt8]?) {
        self.slot = slot
        if let stored { take(stored) }
    }

    /// Takes `stored` as the value when it decodes.
    func take(_ stored: [UInt8]) {}
}

/// The value of one `@State`, cached in the view value and written through to the host
/// once the renderer has bound it to its slot.
@usableFromInline
final class StateBox<Value: StateCodable>: AnyStateBox {
    @exclusivity(unchecked) private(set) var value: Value

    @usableFromInline
    init(default value: Value) {
        self.value = value
    }

    override func take(_ stored: [UInt8]) {
        if let decoded = Value(stateBytes: stored) { value = decoded }
    }

    func set(_ newValue: Value) {
        value = newValue
        guard let slot else { return }
        HostState.write(slot, fingerprint: Value.stateFingerprint, bytes: newValue.stateBytes)
    }
}

/// The screen whose views are being built, while a render pass evaluates a `body`.
enum RenderScope {
    // Render passes run on the host's main thread only (berth.h), one at a time; nested
    // bodies save and restore it.
    @exclusivity(unchecked) nonisolated(unsafe) private(set) static var activeScreen: OpaquePointer?

    /// Runs `body` (a view's `body`, a `ForEach` row) with `screen` as the active screen.
    static func building<T>(for screen: OpaquePointer?, _ body: () -> T) -> T {
        let previous = activeScreen
        activeScreen = screen
        defer { activeScreen = previous }
        return body()
    }
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
