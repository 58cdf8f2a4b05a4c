/// The renderer's entry points for the SDK's inlinable render code (`View`'s defaults, the
/// containers, `if`, `ForEach`): generic ones are inlinable, so a plugin specializes them for
/// its own types; the rest take plain values and metatypes, so a call needs no generic
/// metadata. Called by the SDK's views, not by plugin code.
extension Renderer {
    /// Renders a screen of type `type` whose body is a `body`: `render` renders the body at
    /// the identity it is given, `<ScreenType>/<BodyType>`, with the screen's views building.
    @usableFromInline
    func _screen(_ type: Any.Type, body: Any.Type, _ render: (UInt32) -> Void) {
        let info = types.info(of: type)
        let root = identities.root(name: info.id) { types.name(info) }
        RenderScope.building(for: screen) {
            render(bodyIdentity(of: root, body))
        }
    }

    /// Binds the `@State` of the composite view (of type `type`, its bytes at `view`) to
    /// `identity`, then returns its body's identity, `<identity>/<BodyType>`.
    @usableFromInline
    func _composite(at view: UnsafeRawPointer?, _ type: Any.Type, identity: UInt32, body: Any.Type) -> UInt32 {
        let info = types.info(of: type)
        if info.fieldCount > 0, let view {
            StateFields.bind(view, fields: info, identity: identity, renderer: self)
        }
        return bodyIdentity(of: identity, body)
    }

    /// The identity of a container's child: `<container>.<index>/<Type>`.
    @usableFromInline
    func _child(of container: UInt32, index: Int, _ type: Any.Type) -> UInt32 {
        childIdentity(of: container, index: index, type)
    }

    /// A container node whose children are `content`'s views (VStack, HStack, List, Group).
    @inlinable
    func _container<Content: View>(_ kind: ViewKind, identity: UInt32, content: Content) {
        _container(kind, identity: identity) {
            var index = 0
            content._renderChildren(self, container: identity, index: &index)
        }
    }

    /// An `if` node: the taken branch's views are its children, under `#true` or `#false`.
    @inlinable
    func _branch<Content: View>(identity: UInt32, taken: Bool, content: Content) {
        _container(.conditional, identity: identity, branch: taken) {
            var index = 0
            content._renderChildren(self, container: _branch(of: identity, taken: taken), index: &index)
        }
    }

    /// The identity of the branch taken: `<if>#true` or `<if>#false`.
    @usableFromInline
    func _branch(of identity: UInt32, taken: Bool) -> UInt32 {
        branchIdentity(of: identity, taken: taken)
    }

    /// The rows of the `ForEach` at `forEach`: each row's views are children of
    /// `<ForEach>.<row id>`, so a row's state follows its id, not its position. A repeated id
    /// renders under `<row id>~N` (its N-th repeat, in data order) and is reported once.
    @inlinable
    func _rows<Data: Sequence, ID: Hashable, Content: View>(
        _ data: Data, id: KeyPath<Data.Element, ID>, forEach: UInt32, content: (Data.Element) -> Content
    ) {
        let table = _rowTable(of: forEach, ID.self)
        // `id: \.self` (the common case) reads no key path per row.
        let idIsElement = ID.self == Data.Element.self && id == (\Data.Element.self as AnyKeyPath)
        var repeats = RowRepeats()
        var position = 0
        for element in data {
            let rowID = idIsElement ? element as! ID : element[keyPath: id]
            let row: UInt32
            if ID.self == Int.self {
                row = _row(table, of: forEach, int: rowID as! Int, position: position, repeats: &repeats)
            } else if ID.self == String.self {
                row = _row(table, of: forEach, string: rowID as! String, position: position, repeats: &repeats)
            } else {
                row = _row(table, of: forEach, id: rowID, position: position, repeats: &repeats)
            }
            var index = 0
            content(element)._renderChildren(self, container: row, index: &index)
            position += 1
        }
        _report(repeats, forEach: forEach)
    }

    /// The row table of the `ForEach` at `forEach`, for its type of ids.
    @usableFromInline
    func _rowTable<ID: Hashable>(of forEach: UInt32, _ type: ID.Type) -> AnyObject {
        identities.rows(of: forEach, ID.self)
    }

    /// The identity of the row with `Int` id `int` at `position` (`table` from `_rowTable`).
    @usableFromInline
    func _row(_ table: AnyObject, of forEach: UInt32, int: Int, position: Int, repeats: inout RowRepeats) -> UInt32 {
        row(unsafeDowncast(table, to: RowTable<Int>.self), of: forEach, id: int, position: position, repeats: &repeats)
    }

    /// The identity of the row with `String` id `string` at `position`.
    @usableFromInline
    func _row(_ table: AnyObject, of forEach: UInt32, string: String, position: Int, repeats: inout RowRepeats) -> UInt32 {
        row(unsafeDowncast(table, to: RowTable<String>.self), of: forEach, id: string, position: position, repeats: &repeats)
    }

    /// The identity of the row with id `id` at `position`, for any other type of ids.
    @usableFromInline
    func _row<ID: Hashable>(_ table: AnyObject, of forEach: UInt32, id: ID, position: Int, repeats: inout RowRepeats) -> UInt32 {
        row(unsafeDowncast(table, to: RowTable<ID>.self), of: forEach, id: id, position: position, repeats: &repeats)
    }

    /// Reports the repeated ids of the `ForEach` at `forEach`, if any, in one diagnostic.
    @usableFromInline
    func _report(_ repeats: RowRepeats, forEach: UInt32) {
        guard !repeats.order.isEmpty else { return }
        let listed = repeats.order.map { rowID in
            "'\(rowID)' at rows \((repeats.positions[rowID] ?? []).map(String.init).joined(separator: ", "))"
        }
        diagnostics.append("ForEach \(path(forEach)) has duplicate ids: \(listed.joined(separator: "; ")); each repeat renders as its own row (<id>~N)")
    }
}

/// The ids a `ForEach` pass has met more than once: the rows of each, in data order.
@usableFromInline
struct RowRepeats {
    var positions: [AnyHashable: [Int]] = [:]
    var order: [AnyHashable] = []

    @usableFromInline
    init() {}
}
