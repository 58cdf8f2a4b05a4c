internal import CBerth

/// A value kept outside the screen, in the host's database: it survives reopen, reload and
/// a host restart. The key must be listed in the manifest's `persist` list. A write is
/// durable when the setter returns; when the host cannot persist (its database is broken)
/// the write is refused and logged, never silently dropped.
@propertyWrapper
public struct Persisted<Value: StateCodable> {
    private let box: PersistedBox<Value>

    /// `@Persisted("total") var total = 0`. On a view it binds to the screen being
    /// rendered; on a screen, to the screen being created.
    public init(wrappedValue: Value, _ key: String) {
        box = PersistedBox(key: key, default: wrappedValue, screen: RenderScope.activeScreen ?? PluginRuntime.shared.currentScreen)
    }

    /// The stored value, or the default when nothing is stored. Setting it writes to the
    /// host.
    public var wrappedValue: Value {
        get { box.value }
        nonmutating set { box.set(newValue) }
    }

    /// A binding for controls (`$total`).
    public var projectedValue: Binding<Value> {
        Binding(get: { box.value }, set: { box.set($0) })
    }
}

final class PersistedBox<Value: StateCodable> {
    let key: String
    let screen: OpaquePointer?
    private(set) var value: Value

    init(key: String, default value: Value, screen: OpaquePointer?) {
        self.key = key
        self.screen = screen
        self.value = value
        PluginRuntime.shared.persistedKeysSeen?.insert(key)
        guard let read = PluginRuntime.shared.hostFunction(\.persist_read) else { return }
        var collector = ByteCollector()
        var error = berth_error()
        error.struct_size = UInt32(MemoryLayout<berth_error>.size)
        let status = collector.collect { sink in read(screen, key, sink, &error) }
        if status == berth_status(BERTH_ERR_DENIED) || status == berth_status(BERTH_ERR_INVALID_ARGUMENT) {
            // A refusal (no capability, an undeclared key) is not an empty value: say so where
            // the author looks, once per key (it repeats on every render until a reload).
            // Persistence that is off the host reports itself, once.
            guard PluginRuntime.shared.refusedPersistedReads.insert(key).inserted else { return }
            let message = withUnsafeBytes(of: &error.message) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            Plugin.log("@Persisted(\"\(key)\") not read, showing its default: \(message)", level: .error)
            return
        }
        // Stored as the type fingerprint (8 bytes, little-endian) then the value, so a
        // value written by another type reads as absent and the default applies.
        let stored = collector.bytes
        guard status == BERTH_OK, stored.count >= 8 else { return }
        let fingerprint = stored.prefix(8).enumerated().reduce(UInt64(0)) { $0 | UInt64($1.element) << (8 * UInt64($1.offset)) }
        if fingerprint == Value.stateFingerprint, let decoded = Value(stateBytes: Array(stored.dropFirst(8))) {
            self.value = decoded
        }
    }

    func set(_ newValue: Value) {
        guard let write = PluginRuntime.shared.hostFunction(\.persist_write) else {
            Plugin.log("@Persisted(\"\(key)\"): the host does not provide persistence; value not saved", level: .error)
            return
        }
        var error = berth_error()
        error.struct_size = UInt32(MemoryLayout<berth_error>.size)
        let bytes = withUnsafeBytes(of: Value.stateFingerprint.littleEndian, Array.init) + newValue.stateBytes
        let status = bytes.withUnsafeBufferPointer { buffer in
            write(screen, key, berth_bytes(data: buffer.baseAddress, length: UInt64(buffer.count)), &error)
        }
        guard status == BERTH_OK else {
            let message = withUnsafeBytes(of: &error.message) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            Plugin.log("@Persisted(\"\(key)\") not saved: \(message)", level: .error)
            return
        }
        value = newValue
    }
}
