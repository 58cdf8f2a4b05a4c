/// What the renderer needs of each view type, found once: a short, stable name for
/// identities (the type name without generic arguments), a number per name for interning,
/// and the type's `@State` fields.
final class ViewTypes {
    /// A view type as the renderer sees it: plain numbers, so a lookup copies no reference.
    struct Info {
        /// The type's name id (types with one name share it).
        let id: UInt32
        /// The type's `@State` fields: `fields[firstField..<firstField + fieldCount]`.
        let firstField: Int32
        let fieldCount: Int32
    }

    /// The one table, which every renderer holds (so a lookup needs no global's lazy
    /// initialization check). Render passes run on the host's main thread only (berth.h),
    /// one at a time.
    nonisolated(unsafe) static let shared = ViewTypes()

    /// Every type seen, by metadata address: an open-addressing table in two arrays, not a
    /// `Dictionary`. A freshly loaded image's first dictionary of a key type makes the Swift
    /// runtime check the key's `Hashable` conformance by scanning every loaded image's
    /// conformance records (hundreds of thousands of instructions on a plugin's first
    /// render after a reload); an array's storage needs no such check.
    @exclusivity(unchecked) private var seenTypes = [UnsafeRawPointer?](repeating: nil, count: 64)
    @exclusivity(unchecked) private var seenInfos = [Info](repeating: Info(id: 0, firstField: 0, fieldCount: 0), count: 64)
    @exclusivity(unchecked) private var seenCount = 0
    /// Each name, by name id (a new type's name is found by a scan: a plugin has a few
    /// dozen view type names, and each type is named once).
    @exclusivity(unchecked) private var names: [String] = []
    /// The `@State` fields of every type seen, each type's together.
    @exclusivity(unchecked) private(set) var fields: [StateFields.Field] = []
    /// A direct-mapped front for `seenTypes`, by metadata address: a render looks up a type
    /// several times per view, and a hit here costs no hashing.
    @exclusivity(unchecked) private var recent = [(type: UnsafeRawPointer?, info: Info)](
        repeating: (nil, Info(id: 0, firstField: 0, fieldCount: 0)), count: 256
    )

    private init() {}

    func info(of type: Any.Type) -> Info {
        let address = unsafeBitCast(type, to: UnsafeRawPointer.self)
        let slot = Int(UInt(bitPattern: address) >> 4) & 255
        if recent[slot].type == address { return recent[slot].info }
        let info = seen(address) ?? make(type)
        recent[slot] = (address, info)
        return info
    }

    /// The slot of `address` in `seenTypes`: where it is, or the empty slot where it goes.
    private func slot(of address: UnsafeRawPointer) -> Int {
        let mask = seenTypes.count - 1
        let hash = ((UInt(bitPattern: address) >> 4) &* 0x9E37_79B9_7F4A_7C15) >> 32
        var slot = Int(truncatingIfNeeded: hash) & mask
        while let known = seenTypes[slot], known != address { slot = (slot + 1) & mask }
        return slot
    }

    private func seen(_ address: UnsafeRawPointer) -> Info? {
        let slot = slot(of: address)
        return seenTypes[slot] == nil ? nil : seenInfos[slot]
    }

    private func remember(_ address: UnsafeRawPointer, _ info: Info) {
        if (seenCount + 1) * 2 > seenTypes.count {
            let types = seenTypes, infos = seenInfos
            seenTypes = Array(repeating: nil, count: types.count * 2)
            seenInfos = Array(repeating: Info(id: 0, firstField: 0, fieldCount: 0), count: types.count * 2)
            for (known, info) in zip(types, infos) {
                if let known { let slot = slot(of: known); seenTypes[slot] = known; seenInfos[slot] = info }
            }
        }
        let slot = slot(of: address)
        seenTypes[slot] = address
        seenInfos[slot] = info
        seenCount += 1
    }

    /// The identity name of a type.
    func name(_ info: Info) -> String {
        names[Int(info.id)]
    }

    private func make(_ type: Any.Type) -> Info {
        // `_typeName` is what `String(describing:)` prints for a type, without first asking
        // the metatype for `CustomStringConvertible` and friends: those dynamic casts miss
        // for every type of a freshly loaded image and scan every image's conformances.
        var name = _typeName(type, qualified: false)
        // A modifier takes its content's name: `.bold()` or `.title(…)` changes no identity.
        while name.hasPrefix("ModifiedView<") { name.removeFirst("ModifiedView<".count) }
        if let end = name.firstIndex(where: { $0 == ">" || $0 == "," }) { name = String(name[..<end]) }
        if let generic = name.firstIndex(of: "<") { name = String(name[..<generic]) }
        if name == "ConditionalView" || name == "Optional" { name = "if" }
        // Types with one name (VStack<A> and VStack<B>) share an id: identities name types by name.
        let id: UInt32
        if let known = names.firstIndex(of: name) {
            id = UInt32(known)
        } else {
            id = UInt32(names.count)
            names.append(name)
        }
        let stateFields = StateFields.fields(of: type)
        let info = Info(id: id, firstField: Int32(fields.count), fieldCount: Int32(stateFields.count))
        fields.append(contentsOf: stateFields)
        remember(unsafeBitCast(type, to: UnsafeRawPointer.self), info)
        return info
    }
}
