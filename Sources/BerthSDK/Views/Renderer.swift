/// Walks a screen's view tree once per render pass: builds each view's structural
/// identity, binds each composite view's `@State` to that identity before its `body` runs,
/// writes the tree as JSON for the host, and keeps the input handlers of the interactive
/// views (what `tap`, `toggle`, `type` and `step` reach).
///
/// Identities: a screen's root is its type name; a composite's body is `<identity>/<Type>`;
/// the children of a container are `<container>.<index>/<Type>`; a `ForEach` row is
/// `<ForEach>.<row id>` (the id escaped, a repeated id made unique by its occurrence:
/// `<ForEach>.<row id>~1`); the branches of `if` are `<if>#true` and `<if>#false`.
public final class Renderer {
    let screen: OpaquePointer?
    private(set) var writer = JSONWriter()
    private(set) var inputs: [String: ViewInput] = [:]
    /// Route-context observers declared by `.routerContext` in this render, by type.
    private(set) var contextObservers: [String: ([UInt8]) throws -> Void] = [:]
    /// Problems found while rendering (duplicate `ForEach` ids), one line each.
    private(set) var diagnostics: [String] = []

    init(screen: OpaquePointer?) {
        self.screen = screen
    }

    /// Renders a screen: the root node is its body, at `<ScreenType>/<BodyType>`.
    func renderScreen<S: Screen>(_ screen: S) {
        RenderScope.building(for: self.screen) {
            screen.body._render(self, identity: "\(ViewNames.name(of: S.self))/\(ViewNames.name(of: S.Body.self))")
        }
    }

    /// A composite view: its `@State` is bound to its own identity, then its body runs.
    func renderComposite<V: View>(_ view: V, identity: String) {
        StateFields.bind(view, identity: identity, renderer: self)
        view.body._render(self, identity: "\(identity)/\(ViewNames.name(of: V.Body.self))")
    }

    /// One child of a container, at `<container>.<index>/<Type>`.
    func renderChild<V: View>(_ view: V, container: String, index: Int) {
        view._render(self, identity: "\(container).\(index)/\(ViewNames.name(of: V.self))")
    }

    /// A `.routerContext` in the tree: the type is observed while rendered.
    func observeContext(_ type: String, _ handler: @escaping ([UInt8]) throws -> Void) {
        contextObservers[type] = handler
    }

    // MARK: Nodes

    /// A leaf node with string fields (and, when interactive, its input handler).
    func leaf(type: String, identity: String, fields: [(String, JSONValue)], input: ViewInput? = nil) {
        writer.beginObject()
        writer.field("type", .string(type))
        writer.field("id", .string(identity))
        for (name, value) in fields { writer.field(name, value) }
        writer.endObject()
        if let input { inputs[identity] = input }
    }

    /// A container node; `children` renders its children with `identity` as their container.
    func container(type: String, identity: String, fields: [(String, JSONValue)] = [], children: (String) -> Void) {
        writer.beginObject()
        writer.field("type", .string(type))
        writer.field("id", .string(identity))
        for (name, value) in fields { writer.field(name, value) }
        writer.key("children")
        writer.beginArray()
        children(identity)
        writer.endArray()
        writer.endObject()
    }

    /// A container node whose children are `content`'s views (VStack, HStack, List, Group).
    func container<Content: View>(type: String, identity: String, content: Content) {
        container(type: type, identity: identity) { node in
            var index = 0
            content._renderChildren(self, container: node, index: &index)
        }
    }

    /// An `if` node: the taken branch's views are its children, under `#true` or `#false`.
    func branch<Content: View>(identity: String, taken: Bool, content: Content) {
        container(type: "if", identity: identity, fields: [("branch", .bool(taken))]) { node in
            var index = 0
            content._renderChildren(self, container: node + (taken ? "#true" : "#false"), index: &index)
        }
    }

    /// The rows of a `ForEach` at `identity`: each row's views are children of
    /// `<ForEach>.<row id>`, so a row's state follows its id, not its position. A repeated id
    /// renders under `<row id>~N` (its N-th repeat, in data order) and is reported once.
    func rows<Element, ID: Hashable, Content: View>(
        _ data: some Sequence<Element>, id: KeyPath<Element, ID>, identity: String, content: (Element) -> Content
    ) {
        var firstRow: [ID: Int] = [:]
        var repeats: [ID: [Int]] = [:]
        var repeatOrder: [ID] = []
        for (position, element) in data.enumerated() {
            let rowID = element[keyPath: id]
            var rowIdentity = "\(identity).\(RowIDs.escaped("\(rowID)"))"
            if let first = firstRow[rowID] {
                if repeats[rowID] == nil {
                    repeats[rowID] = [first]
                    repeatOrder.append(rowID)
                }
                repeats[rowID]?.append(position)
                rowIdentity += "~\((repeats[rowID]?.count ?? 1) - 1)"
            } else {
                firstRow[rowID] = position
            }
            var index = 0
            content(element)._renderChildren(self, container: rowIdentity, index: &index)
        }
        guard !repeatOrder.isEmpty else { return }
        let listed = repeatOrder.map { rowID in
            "'\(rowID)' at rows \((repeats[rowID] ?? []).map(String.init).joined(separator: ", "))"
        }
        diagnostics.append("ForEach \(identity) has duplicate ids: \(listed.joined(separator: "; ")); each repeat renders as its own row (<id>~N)")
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

/// Short, stable view names for identities: the type name without generic arguments.
enum ViewNames {
    // Render passes run on the host's main thread only (berth.h), one at a time.
    nonisolated(unsafe) private static var cache: [ObjectIdentifier: String] = [:]

    static func name<V>(of type: V.Type) -> String {
        let key = ObjectIdentifier(type)
        if let name = cache[key] { return name }
        var name = String(describing: type)
        if let generic = name.firstIndex(of: "<") { name = String(name[..<generic]) }
        if name == "ConditionalView" || name == "Optional" { name = "if" }
        cache[key] = name
        return name
    }
}
