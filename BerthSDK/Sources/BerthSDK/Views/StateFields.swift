@_spi(Reflection) import Swift

/// Finds the `@State` properties of a view type and binds them to the view's own
/// structural identity when the renderer reaches it.
///
/// A `@State` is created unbound (a view value is built before anyone knows where it will
/// sit in the tree). Before a composite view's `body` runs, the renderer binds each of its
/// `@State` properties, in declaration order, to the slot (its identity, property index).
/// The stored fields of each view type are read once from the type's reflection metadata
/// (offset and type of each field) and cached, so a render pass never reflects a value.
enum StateFields {
    /// One `@State` field of a view type: where it lies in the value, how to bind it, and
    /// its value type's fingerprint.
    struct Field {
        let offset: Int
        let property: any StateProperty.Type
        let fingerprint: UInt64
    }

    /// Binds every `@State` of `view` (its `fields`) to `identity`, reading the stored values.
    static func bind<V: View>(_ view: V, fields: [Field], identity: UInt32, renderer: Renderer) {
        guard !fields.isEmpty else { return }
        withUnsafeBytes(of: view) { raw in
            guard let base = raw.baseAddress else { return }
            var index: UInt32 = 0
            for field in fields {
                field.property._bind(at: base + field.offset, identity: identity, index: index, fingerprint: field.fingerprint, renderer: renderer)
                index += 1
            }
        }
    }

    /// The `@State` fields of a view type, read from its metadata (once per type, by `ViewTypes`).
    static func fields(of type: Any.Type) -> [Field] {
        var found: [Field] = []
        // Structs only: a class or enum view keeps its @State local (nothing to bind).
        _ = _forEachField(of: type, options: []) { _, offset, fieldType, _ in
            if isState(fieldType), let property = fieldType as? any StateProperty.Type {
                found.append(Field(offset: offset, property: property, fingerprint: property._fingerprint))
            }
            return true
        }
        return found
    }

    /// Whether `type` is some `State<…>`, told by its nominal type descriptor. Only such a
    /// field is then cast: the runtime answers `as? StateProperty.Type` for a type of a
    /// freshly loaded image by scanning the conformance records of every loaded image, and
    /// most fields (strings, closures, child views) are not `@State`.
    static func isState(_ type: Any.Type) -> Bool {
        nominalDescriptor(of: type).map { $0 == stateDescriptor } ?? false
    }

    private static let stateDescriptor = nominalDescriptor(of: State<Int>.self)

    /// A struct's nominal type descriptor: struct metadata (kind 0x200) holds it in its
    /// second word (the Swift ABI's TypeMetadata layout); its address, nil for any other kind.
    private static func nominalDescriptor(of type: Any.Type) -> UInt? {
        let metadata = unsafeBitCast(type, to: UnsafeRawPointer.self)
        guard metadata.load(as: UInt.self) == 0x200 else { return nil }
        return metadata.load(fromByteOffset: MemoryLayout<UInt>.stride, as: UInt.self)
    }
}

/// A property wrapper the renderer binds to a slot in the host (`@State`).
protocol StateProperty {
    /// Binds the wrapper stored at `address` to property `index` of the view at `identity`.
    static func _bind(at address: UnsafeRawPointer, identity: UInt32, index: UInt32, fingerprint: UInt64, renderer: Renderer)
    /// The value type's `stateFingerprint`.
    static var _fingerprint: UInt64 { get }
}
