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
    /// One `@State` field of a view type: where it lies in the value and its value type's
    /// fingerprint.
    struct Field {
        let offset: Int
        let fingerprint: UInt64
    }

    /// Binds every `@State` of the view whose bytes are at `view` (a type with `fields`) to
    /// `identity`, reading the stored values.
    static func bind(_ view: UnsafeRawPointer, fields type: ViewTypes.Info, identity: UInt32, renderer: Renderer) {
        let first = Int(type.firstField)
        let paths = renderer.identities.paths
        for index in 0..<Int(type.fieldCount) {
            let field = renderer.types.fields[first + index]
            let slot = StateSlot(screen: renderer.screen, paths: paths, id: identity, index: UInt32(index))
            let stored = renderer.storedState(slot, fingerprint: field.fingerprint)
            // Every `@State` is one reference to its box, which the view holds while it binds.
            view.load(fromByteOffset: field.offset, as: Unmanaged<AnyStateBox>.self)._withUnsafeGuaranteedRef { box in
                box.bind(slot, stored: stored)
            }
        }
    }

    /// The `@State` fields of a view type, read from its metadata (once per type, by `ViewTypes`).
    static func fields(of type: Any.Type) -> [Field] {
        var found: [Field] = []
        // Structs only: a class or enum view keeps its @State local (nothing to bind).
        _ = _forEachField(of: type, options: []) { _, offset, fieldType, _ in
            if isState(fieldType), let property = fieldType as? any StateProperty.Type {
                found.append(Field(offset: offset, fingerprint: property._fingerprint))
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

    private static let stateDescriptor = descriptor(ofStateOf: Int.self)

    /// `State<Value>`'s nominal type descriptor, asked for by unspecialized code: it gets
    /// the metadata from `State`'s accessor with the `StateCodable` conformance in hand.
    /// Specialized, `State<Int>` would be found by its mangled name, and the runtime would
    /// check `Int: StateCodable` by scanning every loaded image's conformance records (a
    /// freshly loaded image's first render pays that).
    @_semantics("optimize.sil.specialize.generic.never")
    @inline(never)
    private static func descriptor<Value: StateCodable>(ofStateOf _: Value.Type) -> UInt? {
        nominalDescriptor(of: State<Value>.self)
    }

    /// A struct's nominal type descriptor: struct metadata (kind 0x200) holds it in its
    /// second word (the Swift ABI's TypeMetadata layout); its address, nil for any other kind.
    private static func nominalDescriptor(of type: Any.Type) -> UInt? {
        let metadata = unsafeBitCast(type, to: UnsafeRawPointer.self)
        guard metadata.load(as: UInt.self) == 0x200 else { return nil }
        return metadata.load(fromByteOffset: MemoryLayout<UInt>.stride, as: UInt.self)
    }
}

/// A property wrapper the renderer binds to a slot in the host (`@State`): stored as one
/// reference to an `AnyStateBox`.
protocol StateProperty {
    /// The value type's `stateFingerprint`.
    static var _fingerprint: UInt64 { get }
}
