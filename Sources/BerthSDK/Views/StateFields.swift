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
    /// One `@State` field of a view type: where it lies in the value, and how to bind it.
    private struct Field {
        let offset: Int
        let property: any StateProperty.Type
    }

    // Render passes run on the host's main thread only (berth.h), one at a time.
    nonisolated(unsafe) private static var cache: [ObjectIdentifier: [Field]] = [:]

    /// Binds every `@State` of `view` to `identity`, reading the stored values.
    static func bind<V: View>(_ view: V, identity: UInt32, renderer: Renderer) {
        let fields = fields(of: V.self)
        guard !fields.isEmpty else { return }
        withUnsafeBytes(of: view) { raw in
            guard let base = raw.baseAddress else { return }
            for (index, field) in fields.enumerated() {
                field.property._bind(at: base + field.offset, identity: identity, index: UInt32(index), renderer: renderer)
            }
        }
    }

    private static func fields<V>(of type: V.Type) -> [Field] {
        let key = ObjectIdentifier(type)
        if let known = cache[key] { return known }
        var found: [Field] = []
        // Structs only: a class or enum view keeps its @State local (nothing to bind).
        _ = _forEachField(of: type, options: []) { _, offset, fieldType, _ in
            if let property = fieldType as? any StateProperty.Type { found.append(Field(offset: offset, property: property)) }
            return true
        }
        cache[key] = found
        return found
    }
}

/// A property wrapper the renderer binds to a slot in the host (`@State`).
protocol StateProperty {
    /// Binds the wrapper stored at `address` to property `index` of the view at `identity`.
    static func _bind(at address: UnsafeRawPointer, identity: UInt32, index: UInt32, renderer: Renderer)
}
