/// Walks a screen's view tree once per render pass: finds each view's structural
/// identity, binds each composite view's `@State` to that identity before its `body` runs,
/// writes the tree in berth.h's binary view-tree format, and keeps the input handlers of
/// the interactive views (what `tap`, `toggle`, `type` and `step` reach).
///
/// Identities: a screen's root is its type name; a composite's body is `<identity>/<Type>`;
/// the children of a container are `<container>.<index>/<Type>`; a `ForEach` row is
/// `<ForEach>.<row id>` (the id escaped, a repeated id made unique by its occurrence:
/// `<ForEach>.<row id>~1`); the branches of `if` are `<if>#true` and `<if>#false`. Each
/// identity is interned in the screen's `IdentityTable` and named by number.
public final class Renderer {
    let screen: OpaquePointer?
    let identities: IdentityTable
    /// The state slots the host sent with the pass; nil: read each through `state_read`.
    let batch: SlotBatch?
    @exclusivity(unchecked) private(set) var writer = TreeWriter()
    /// Input handlers of the interactive views, by identity id, in tree order.
    @exclusivity(unchecked) private(set) var inputs: [(identity: UInt32, input: ViewInput)] = []
    /// Route-context observers declared by `.routerContext` in this render, by type.
    private(set) var contextObservers: [String: ([UInt8]) throws -> Void] = [:]
    /// Problems found while rendering (duplicate `ForEach` ids), one line each.
    private(set) var diagnostics: [String] = []
    /// Nodes written so far as children of the container being written.
    @exclusivity(unchecked) private var siblings = 0
    /// Identities this pass used (to bound the identity table).
    @exclusivity(unchecked) private(set) var identitiesUsed = 0

    init(screen: OpaquePointer?, identities: IdentityTable, batch: SlotBatch?) {
        self.screen = screen
        self.identities = identities
        self.batch = batch
        identities.beginPass()
    }

    /// Renders a screen: the root node is its body, at `<ScreenType>/<BodyType>`.
    func renderScreen<S: Screen>(_ screen: S) {
        let type = ViewTypes.info(of: S.self)
        let root = identities.root(name: type.id) { type.name }
        RenderScope.building(for: self.screen) {
            screen.body._render(self, identity: bodyIdentity(of: root, S.Body.self))
        }
    }

    /// A composite view: its `@State` is bound to its own identity, then its body runs.
    func renderComposite<V: View>(_ view: V, identity: UInt32) {
        StateFields.bind(view, fields: ViewTypes.info(of: V.self).stateFields, identity: identity, renderer: self)
        view.body._render(self, identity: bodyIdentity(of: identity, V.Body.self))
    }

    /// One child of a container, at `<container>.<index>/<Type>`.
    func renderChild<V: View>(_ view: V, container: UInt32, index: Int) {
        let type = ViewTypes.info(of: V.self)
        identitiesUsed += 1
        view._render(self, identity: identities.child(of: container, index: index, name: type.id) { type.name })
    }

    /// A `.routerContext` in the tree: the type is observed while rendered.
    func observeContext(_ type: String, _ handler: @escaping ([UInt8]) throws -> Void) {
        contextObservers[type] = handler
    }

    /// The identity path of `identity` (for state writes, input and diagnostics).
    func path(_ identity: UInt32) -> String {
        identities.paths[Int(identity)]
    }

    /// The stored bytes of `@State` slot (identity, index), from the pass's batch, or
    /// through `state_read` when the host sent none.
    func storedState(_ slot: StateSlot, identity: UInt32, fingerprint: UInt64) -> [UInt8]? {
        guard let batch else { return HostState.read(slot, fingerprint: fingerprint) }
        return batch.read(identity: identity, path: slot.identity, index: slot.index, fingerprint: fingerprint)
    }

    private func bodyIdentity<Body: View>(of parent: UInt32, _ type: Body.Type) -> UInt32 {
        let type = ViewTypes.info(of: Body.self)
        identitiesUsed += 1
        return identities.body(of: parent, name: type.id) { type.name }
    }

    // MARK: Nodes

    /// A leaf node (and, when interactive, its input handler).
    func leaf(_ kind: ViewKind, identity: UInt32, text: String? = nil, label: String? = nil, isOn: Bool? = nil, value: Int? = nil,
              input: ViewInput? = nil) {
        _ = writer.node(kind, identity: identity, text: text, label: label, isOn: isOn, value: value)
        siblings += 1
        if let input { inputs.append((identity, input)) }
    }

    /// A container node; `children` renders its children.
    func container(_ kind: ViewKind, identity: UInt32, branch: Bool? = nil, children: () -> Void) {
        let childCount = writer.node(kind, identity: identity, branch: branch)
        let outer = siblings
        siblings = 0
        children()
        writer.setChildCount(at: childCount, siblings)
        siblings = outer + 1
    }

    /// A container node whose children are `content`'s views (VStack, HStack, List, Group).
    func container<Content: View>(_ kind: ViewKind, identity: UInt32, content: Content) {
        container(kind, identity: identity) {
            var index = 0
            content._renderChildren(self, container: identity, index: &index)
        }
    }

    /// An `if` node: the taken branch's views are its children, under `#true` or `#false`.
    func branch<Content: View>(identity: UInt32, taken: Bool, content: Content) {
        container(.conditional, identity: identity, branch: taken) {
            var index = 0
            identitiesUsed += 1
            content._renderChildren(self, container: identities.branch(of: identity, taken: taken), index: &index)
        }
    }

    /// The rows of the `ForEach` at `forEach`: each row's views are children of
    /// `<ForEach>.<row id>`, so a row's state follows its id, not its position. A repeated id
    /// renders under `<row id>~N` (its N-th repeat, in data order) and is reported once.
    func rows<Element, ID: Hashable, Content: View>(
        _ data: some Sequence<Element>, id: KeyPath<Element, ID>, forEach: UInt32, content: (Element) -> Content
    ) {
        let table = identities.rows(of: forEach, ID.self)
        var repeats: [ID: [Int]] = [:]
        var repeatOrder: [ID] = []
        var position = -1
        for element in data {
            position += 1
            let rowID = element[keyPath: id]
            var row = identities.row(table, of: forEach, id: rowID, occurrence: 0)
            if let first = identities.claim(row, row: position) {
                if repeats[rowID] == nil {
                    repeats[rowID] = [first]
                    repeatOrder.append(rowID)
                }
                repeats[rowID]?.append(position)
                row = identities.row(table, of: forEach, id: rowID, occurrence: (repeats[rowID]?.count ?? 1) - 1)
                _ = identities.claim(row, row: position)
            }
            identitiesUsed += 1
            var index = 0
            content(element)._renderChildren(self, container: row, index: &index)
        }
        guard !repeatOrder.isEmpty else { return }
        let listed = repeatOrder.map { rowID in
            "'\(rowID)' at rows \((repeats[rowID] ?? []).map(String.init).joined(separator: ", "))"
        }
        diagnostics.append("ForEach \(path(forEach)) has duplicate ids: \(listed.joined(separator: "; ")); each repeat renders as its own row (<id>~N)")
    }

    /// The tree as the host reads it: the header and definitions, then the nodes.
    func finish() -> (prefix: [UInt8], nodes: [UInt8]) {
        let reset = identities.resetPending
        let first = identities.sentCount
        let prefix = writer.prefix(definitions: identities.takeUnsent(), firstID: first, reset: reset, alive: batch?.alive ?? [])
        identities.resetSent()
        identities.lastPassUsed = identitiesUsed
        return (prefix, writer.nodes)
    }
}

/// Row ids as identity segments: the characters that structure an identity are escaped,
/// so no row id can make one row's identity a prefix of another view's.
enum RowIDs {
    static func escaped(_ id: String) -> String {
        guard id.utf8.contains(where: { $0 == 0x2E || $0 == 0x2F || $0 == 0x23 || $0 == 0x25 || $0 == 0x7E }) else { return id }
        var result = ""
        for character in id.unicodeScalars {
            switch character {
            case ".": result += "%2E"
            case "/": result += "%2F"
            case "#": result += "%23"
            case "%": result += "%25"
            case "~": result += "%7E"
            default: result.unicodeScalars.append(character)
            }
        }
        return result
    }
}

/// What an interactive view does with input from the host.
enum ViewInput {
    case tap(() -> Void)
    case toggle(Binding<Bool>)
    case text(Binding<String>)
    case step(Binding<Int>, step: Int)
}

/// What the renderer needs of each view type, found once: a short, stable name for
/// identities (the type name without generic arguments), a number per name for interning,
/// and the type's `@State` fields.
enum ViewTypes {
    struct Info {
        let id: UInt32
        let name: String
        let stateFields: [StateFields.Field]
    }

    // Render passes run on the host's main thread only (berth.h), one at a time.
    @exclusivity(unchecked) nonisolated(unsafe) private static var cache: [ObjectIdentifier: Info] = [:]
    @exclusivity(unchecked) nonisolated(unsafe) private static var nameIDs: [String: UInt32] = [:]
    /// A direct-mapped front for `cache`, by metadata address: a render looks up a type
    /// several times per view, and a hit here costs no hashing.
    @exclusivity(unchecked) nonisolated(unsafe) private static var recent = [(type: UnsafeRawPointer?, info: Info?)](repeating: (nil, nil), count: 256)

    static func info<V>(of type: V.Type) -> Info {
        let address = unsafeBitCast(type, to: UnsafeRawPointer.self)
        let slot = Int(UInt(bitPattern: address) >> 4) & 255
        if recent[slot].type == address, let info = recent[slot].info { return info }
        let info = cache[ObjectIdentifier(type)] ?? make(type)
        recent[slot] = (address, info)
        return info
    }

    private static func make(_ type: Any.Type) -> Info {
        // `_typeName` is what `String(describing:)` prints for a type, without first asking
        // the metatype for `CustomStringConvertible` and friends: those dynamic casts miss
        // for every type of a freshly loaded image and scan every image's conformances.
        var name = _typeName(type, qualified: false)
        if let generic = name.firstIndex(of: "<") { name = String(name[..<generic]) }
        if name == "ConditionalView" || name == "Optional" { name = "if" }
        // Types with one name (VStack<A> and VStack<B>) share an id: identities name types by name.
        let id = nameIDs[name] ?? UInt32(nameIDs.count)
        nameIDs[name] = id
        let info = Info(id: id, name: name, stateFields: StateFields.fields(of: type))
        cache[ObjectIdentifier(type)] = info
        return info
    }
}
