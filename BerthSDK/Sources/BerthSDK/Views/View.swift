/// A piece of a screen's UI. Build views in `body` with the `@ViewBuilder` syntax; the SDK
/// turns the tree into a description the host renders (text on a terminal, JSON for tools).
///
/// A composite view (your own struct) describes itself with `body`. Its `@State`
/// properties live in the host, keyed by the view's own structural identity and their
/// order, so they survive every re-render although the view values are rebuilt each time.
public protocol View {
    associatedtype Body: View
    @ViewBuilder var body: Body { get }

    /// Renders this view as the node at `identity` (an id in the screen's identity table).
    /// Primitive views implement it; composite views use the default, which binds their
    /// `@State` to `identity` and renders `body`.
    func _render(_ renderer: Renderer, identity: UInt32)

    /// Renders this view as the children of a container starting at `index`. Transparent
    /// groupings (a builder's tuple) render each element; everything else renders itself.
    func _renderChildren(_ renderer: Renderer, container: UInt32, index: inout Int)
}

// The defaults below, and the render methods of the SDK's generic views, are inlinable: a
// plugin's compiler specializes them for its own view types, so a render pass makes no
// generic metadata lookups and no value-witness copies per view. They reach the renderer
// only through its non-generic entry points (RendererEntry.swift). Plugins build the SDK
// from source, so inlining fixes no ABI.
extension View {
    /// Binds the view's `@State` to `identity` and renders its `body`. Called by the
    /// renderer, not by plugin code.
    @inlinable
    public func _render(_ renderer: Renderer, identity: UInt32) {
        let bodyIdentity = withUnsafeBytes(of: self) { view in
            renderer._composite(at: view.baseAddress, Self.self, identity: identity, body: Body.self)
        }
        body._render(renderer, identity: bodyIdentity)
    }

    /// Renders the view as one child of `container` at `index`, then advances `index`.
    /// Called by the renderer, not by plugin code.
    @inlinable
    public func _renderChildren(_ renderer: Renderer, container: UInt32, index: inout Int) {
        _render(renderer, identity: renderer._child(of: container, index: index, Self.self))
        index += 1
    }
}

extension Never: View {
    /// `Never` has no body; calling this traps.
    public var body: Never { fatalError("Never has no body") }
}

/// Marks a built-in view: it renders itself and has no body.
public protocol PrimitiveView: View where Body == Never {}

extension PrimitiveView {
    /// A primitive view has no body; calling this traps.
    public var body: Never { fatalError("\(Self.self) is a primitive view and has no body") }
}

/// The result builder behind `body`: blocks, `if`, `if … else`.
@resultBuilder
public enum ViewBuilder {
    /// An empty block: no view.
    @inlinable
    public static func buildBlock() -> EmptyView { EmptyView() }

    /// A block with one view: that view.
    @inlinable
    public static func buildBlock<Content: View>(_ content: Content) -> Content { content }

    /// A block with several views: a `TupleView` of them, in order.
    @inlinable
    public static func buildBlock<each Content: View>(_ content: repeat each Content) -> TupleView<repeat each Content> {
        TupleView(repeat each content)
    }

    /// An `if` without `else`: the content, or nothing when the condition is false.
    @inlinable
    public static func buildIf<Content: View>(_ content: Content?) -> ConditionalView<Content, EmptyView> {
        content.map { .trueBranch($0) } ?? .falseBranch(EmptyView())
    }

    /// The `if` branch of an `if … else`.
    @inlinable
    public static func buildEither<TrueContent: View, FalseContent: View>(first: TrueContent) -> ConditionalView<TrueContent, FalseContent> {
        .trueBranch(first)
    }

    /// The `else` branch of an `if … else`.
    @inlinable
    public static func buildEither<TrueContent: View, FalseContent: View>(second: FalseContent) -> ConditionalView<TrueContent, FalseContent> {
        .falseBranch(second)
    }
}

/// Several views in a row, as a builder block makes them. Transparent: its elements become
/// children of the enclosing container.
public struct TupleView<each Content: View>: PrimitiveView {
    @usableFromInline let content: (repeat each Content)

    // Inlinable as the rest: a plugin's compiler then builds its tuple with no generic
    // metadata lookup at run time (one per block per render otherwise).
    @inlinable
    init(_ content: repeat each Content) {
        self.content = (repeat each content)
    }

    /// Renders the views as the children of a group at `identity`. Called by the renderer,
    /// not by plugin code.
    @inlinable
    public func _render(_ renderer: Renderer, identity: UInt32) {
        // Outside a container (a tuple as a whole body) it behaves like a Group.
        renderer._container(.group, identity: identity, content: self)
    }

    /// Renders each view as a child of `container`, advancing `index` for each. Called by
    /// the renderer, not by plugin code.
    @inlinable
    public func _renderChildren(_ renderer: Renderer, container: UInt32, index: inout Int) {
        for element in repeat each content {
            element._renderChildren(renderer, container: container, index: &index)
        }
    }
}

/// `if` / `if … else`: one of two branches, rendered under `#true` or `#false` so the two
/// branches never share state; switching branches drops the old branch's state.
public enum ConditionalView<TrueContent: View, FalseContent: View>: PrimitiveView {
    case trueBranch(TrueContent)
    case falseBranch(FalseContent)

    /// Renders the branch taken under `identity`. Called by the renderer, not by plugin
    /// code.
    @inlinable
    public func _render(_ renderer: Renderer, identity: UInt32) {
        switch self {
        case .trueBranch(let content): renderer._branch(identity: identity, taken: true, content: content)
        case .falseBranch(let content): renderer._branch(identity: identity, taken: false, content: content)
        }
    }
}

/// Nothing. Renders no node.
public struct EmptyView: PrimitiveView {
    /// An empty view.
    @inlinable
    public init() {}

    /// Renders nothing. Called by the renderer, not by plugin code.
    @inlinable
    public func _render(_ renderer: Renderer, identity: UInt32) {}

    /// Adds no child and leaves `index` unchanged. Called by the renderer, not by plugin
    /// code.
    @inlinable
    public func _renderChildren(_ renderer: Renderer, container: UInt32, index: inout Int) {}
}
