internal import CBerth

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
    /// What the renderer knows of each view type.
    let types = ViewTypes.shared
    @exclusivity(unchecked) private(set) var writer: TreeWriter
    /// Input handlers of the interactive views and their identity ids, in tree order.
    @exclusivity(unchecked) private(set) var inputs = ViewInputs()
    /// Route-context observers declared by `.routerContext` in this render, by type.
    private(set) var contextObservers: [String: ([UInt8]) throws -> Void] = [:]
    /// Problems found while rendering (duplicate `ForEach` ids), one line each.
    var diagnostics: [String] = []
    /// Nodes written so far as children of the container being written.
    @exclusivity(unchecked) private var siblings = 0
    /// Identities this pass used (to bound the identity table).
    @exclusivity(unchecked) private(set) var identitiesUsed = 0
    /// The view-tree version written: the highest this SDK and the host both read. Below 2,
    /// decorations are left out and the version-2 kinds are written as version-1 ones.
    let treeVersion: UInt32
    /// A modifier's decoration, until the first node its content writes takes it.
    @exclusivity(unchecked) private var pendingDecoration: ViewDecoration?

    init(screen: OpaquePointer?, identities: IdentityTable, batch: SlotBatch?, hostTreeVersion: UInt32 = UInt32(BERTH_VIEW_TREE_VERSION)) {
        self.screen = screen
        self.identities = identities
        self.batch = batch
        treeVersion = max(1, min(hostTreeVersion, UInt32(BERTH_VIEW_TREE_VERSION)))
        // Room for a tree like the last one, so a steady screen's tree never regrows.
        writer = TreeWriter(capacity: identities.lastPassBytes + identities.lastPassBytes / 8 + 4_096)
        identities.beginPass()
    }

    /// Renders a screen: the root node is its body, at `<ScreenType>/<BodyType>`.
    func renderScreen(_ screen: any Screen) {
        screen._render(self)
    }

    /// A `.routerContext` in the tree: the type is observed while rendered.
    func observeContext(_ type: String, _ handler: @escaping ([UInt8]) throws -> Void) {
        contextObservers[type] = handler
    }

    /// The identity path of `identity` (for state writes, input and diagnostics).
    func path(_ identity: UInt32) -> String {
        identities.paths[identity]
    }

    /// The stored bytes of `@State` slot (identity, index), from the pass's batch, or
    /// through `state_read` when the host sent none.
    func storedState(_ slot: StateSlot, fingerprint: UInt64) -> [UInt8]? {
        guard let batch else { return HostState.read(slot, fingerprint: fingerprint) }
        return batch.read(slot, fingerprint: fingerprint)
    }

    /// `<parent>/<BodyType>`. Inlined, as `childIdentity`: once per view of a pass.
    @inline(__always)
    func bodyIdentity(of parent: UInt32, _ type: Any.Type) -> UInt32 {
        let type = types.info(of: type)
        identitiesUsed += 1
        return identities.body(of: parent, name: type.id) { types.name(type) }
    }

    /// `<container>.<index>/<Type>`.
    @inline(__always)
    func childIdentity(of container: UInt32, index: Int, _ type: Any.Type) -> UInt32 {
        let type = types.info(of: type)
        identitiesUsed += 1
        return identities.child(of: container, index: index, name: type.id) { types.name(type) }
    }

    /// `<if>#true` or `<if>#false`.
    func branchIdentity(of parent: UInt32, taken: Bool) -> UInt32 {
        identitiesUsed += 1
        return identities.branch(of: parent, taken: taken)
    }

    /// The identity of row `id` at `position` of the `ForEach` at `forEach`; a repeated id
    /// gets `<row id>~N`, its N-th repeat, and is noted in `repeats`.
    func row<ID: Hashable>(_ table: RowTable<ID>, of forEach: UInt32, id: ID, position: Int, repeats: inout RowRepeats) -> UInt32 {
        identitiesUsed += 1
        let row = identities.row(table, of: forEach, id: id, occurrence: 0)
        guard let first = identities.claim(row, row: position) else { return row }
        let key = AnyHashable(id)
        if repeats.positions[key] == nil {
            repeats.positions[key] = [first]
            repeats.order.append(key)
        }
        repeats.positions[key]?.append(position)
        let repeated = identities.row(table, of: forEach, id: id, occurrence: (repeats.positions[key]?.count ?? 1) - 1)
        _ = identities.claim(repeated, row: position)
        return repeated
    }

    // MARK: Nodes

    /// A leaf node (and, when interactive, its input handler).
    func leaf(_ kind: ViewKind, identity: UInt32, text: String? = nil, label: String? = nil, isOn: Bool? = nil, value: Int? = nil,
              input: ViewInput? = nil) {
        let decoration = takeDecoration()
        _ = writer.node(kind, identity: identity, text: text, label: label, isOn: isOn, value: value,
                        style: decoration?.styleWord, title: decoration?.title)
        siblings += 1
        if let input { inputs.append(input, identity: identity) }
    }

    /// A container node; `children` renders its children.
    @usableFromInline
    func _container(_ kind: ViewKind, identity: UInt32, branch: Bool? = nil, children: () -> Void) {
        let decoration = takeDecoration()
        let childCount = writer.node(kind, identity: identity, branch: branch, style: decoration?.styleWord, title: decoration?.title)
        let outer = siblings
        siblings = 0
        children()
        writer.setChildCount(at: childCount, siblings)
        siblings = outer + 1
    }

    /// A Spacer (an empty Text for a version-1 host).
    func spacer(identity: UInt32) {
        treeVersion >= 2 ? leaf(.spacer, identity: identity) : leaf(.text, identity: identity, text: "")
    }

    /// A Divider (a Text of rules for a version-1 host).
    func divider(identity: UInt32) {
        treeVersion >= 2 ? leaf(.divider, identity: identity) : leaf(.text, identity: identity, text: String(repeating: "─", count: 24))
    }

    /// A Picker and one Text child per option (a Stepper over the index for a version-1 host).
    func picker(identity: UInt32, label: String, selection: Binding<Int>, options: [String]) {
        let selected = selection.wrappedValue
        let input = ViewInput.select(selection, count: options.count)
        guard treeVersion >= 2 else {
            let shown = options.indices.contains(selected) ? "\(label): \(options[selected])" : label
            return leaf(.stepper, identity: identity, label: shown, value: selected, input: input)
        }
        let decoration = takeDecoration()
        let childCount = writer.node(.picker, identity: identity, label: label, value: selected, style: decoration?.styleWord, title: decoration?.title)
        for (index, option) in options.enumerated() {
            _ = writer.node(.text, identity: childIdentity(of: identity, index: index, Text.self), text: option)
        }
        writer.setChildCount(at: childCount, options.count)
        siblings += 1
        inputs.append(input, identity: identity)
    }

    /// Renders `content` with `decoration` on its first node (merged inside any decoration
    /// still pending from an enclosing modifier); a content that writes no node drops it.
    @usableFromInline
    func _decorating(_ decoration: ViewDecoration, _ content: () -> Void) {
        pendingDecoration = pendingDecoration.map { $0.merged(with: decoration) } ?? decoration
        content()
        pendingDecoration = nil
    }

    /// The pending decoration, for the node being written (nil for a version-1 host).
    private func takeDecoration() -> ViewDecoration? {
        guard let decoration = pendingDecoration else { return nil }
        pendingDecoration = nil
        return treeVersion >= 2 ? decoration : nil
    }

    /// The tree as the host reads it: the header and definitions, then the nodes.
    func finish() -> (prefix: ByteBuffer, nodes: ByteBuffer) {
        let reset = identities.resetPending
        let first = identities.sentCount
        let prefix = writer.prefix(version: treeVersion, definitions: identities.takeUnsent(), firstID: first, reset: reset, alive: batch?.alive ?? [])
        identities.resetSent()
        identities.lastPassUsed = identitiesUsed
        identities.lastPassBytes = writer.bytes.count
        return (prefix, writer.bytes)
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
    /// A picker's selected index among `count` options.
    case select(Binding<Int>, count: Int)
}
