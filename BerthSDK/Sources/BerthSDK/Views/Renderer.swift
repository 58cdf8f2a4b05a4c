/// Walks a screen's view tree once per render pass: builds each view's structural
/// identity, sets the hydration context while a `body` runs (so `@State` finds its slot in
/// the host), writes the tree as JSON for the host, and keeps the input handlers of the
/// interactive views (what `tap`, `toggle`, `type` and `step` reach).
///
/// Identities: a screen's root is its type name; a composite's body is `<identity>/<Type>`;
/// the children of a container are `<container>.<index>/<Type>`; a `ForEach` row is
/// `<ForEach>.<row id>`; the branches of `if` are `<if>#true` and `<if>#false`.
public final class Renderer {
    let screen: OpaquePointer?
    private(set) var writer = JSONWriter()
    private(set) var inputs: [String: ViewInput] = [:]
    /// Route-context observers declared by `.routerContext` in this render, by type.
    private(set) var contextObservers: [String: ([UInt8]) throws -> Void] = [:]

    init(screen: OpaquePointer?) {
        self.screen = screen
    }

    /// Renders a screen: the root node is its body, at `<ScreenType>/<BodyType>`.
    func renderScreen<S: Screen>(_ screen: S) {
        let identity = ViewNames.name(of: S.self)
        let body = StateRegistration.hydrating(identity: identity, screen: self.screen) { screen.body }
        body._render(self, identity: "\(identity)/\(ViewNames.name(of: S.Body.self))")
    }

    /// A composite view: its body runs with the hydration context at its identity.
    func renderComposite<V: View>(_ view: V, identity: String) {
        let body = StateRegistration.hydrating(identity: identity, screen: screen) { view.body }
        body._render(self, identity: "\(identity)/\(ViewNames.name(of: V.Body.self))")
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

    /// A `ForEach` row: built with the hydration context at the row's identity, so the
    /// row's state follows its explicit id, not its position.
    func row<Content: View>(container: String, id: String, content: () -> Content) {
        let rowIdentity = "\(container).\(id)"
        let view = StateRegistration.hydrating(identity: rowIdentity, screen: screen, content)
        var index = 0
        view._renderChildren(self, container: rowIdentity, index: &index)
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
