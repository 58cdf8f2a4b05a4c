/// Children top to bottom.
public struct VStack<Content: View>: PrimitiveView {
    @usableFromInline let content: Content

    /// A vertical stack of the views `content` builds.
    @inlinable
    public init(@ViewBuilder content: () -> Content) {
        self.content = content()
    }

    /// Renders a vertical stack node at `identity` and its children. Called by the
    /// renderer, not by plugin code.
    @inlinable
    public func _render(_ renderer: Renderer, identity: UInt32) {
        renderer._container(.vStack, identity: identity, content: content)
    }
}

/// Children left to right.
public struct HStack<Content: View>: PrimitiveView {
    @usableFromInline let content: Content

    /// A horizontal stack of the views `content` builds.
    @inlinable
    public init(@ViewBuilder content: () -> Content) {
        self.content = content()
    }

    /// Renders a horizontal stack node at `identity` and its children. Called by the
    /// renderer, not by plugin code.
    @inlinable
    public func _render(_ renderer: Renderer, identity: UInt32) {
        renderer._container(.hStack, identity: identity, content: content)
    }
}

/// A list of rows (usually a `ForEach`).
public struct List<Content: View>: PrimitiveView {
    @usableFromInline let content: Content

    /// A list of the views `content` builds.
    @inlinable
    public init(@ViewBuilder content: () -> Content) {
        self.content = content()
    }

    /// Renders a list node at `identity` and its rows. Called by the renderer, not by
    /// plugin code.
    @inlinable
    public func _render(_ renderer: Renderer, identity: UInt32) {
        renderer._container(.list, identity: identity, content: content)
    }
}

/// Groups views without laying them out.
public struct Group<Content: View>: PrimitiveView {
    @usableFromInline let content: Content

    /// A group of the views `content` builds.
    @inlinable
    public init(@ViewBuilder content: () -> Content) {
        self.content = content()
    }

    /// Renders a group node at `identity` and its children. Called by the renderer, not by
    /// plugin code.
    @inlinable
    public func _render(_ renderer: Renderer, identity: UInt32) {
        renderer._container(.group, identity: identity, content: content)
    }
}

/// One row per element, identified by an explicit id: a row's identity (and its state)
/// follows the element, not its position, so reordering keeps each row's state.
public struct ForEach<Data: RandomAccessCollection, ID: Hashable, Content: View>: PrimitiveView {
    @usableFromInline let data: Data
    @usableFromInline let id: KeyPath<Data.Element, ID>
    @usableFromInline let content: (Data.Element) -> Content

    /// One row per element of `data`, built by `content` and identified by the element's
    /// `id` key path.
    @inlinable
    public init(_ data: Data, id: KeyPath<Data.Element, ID>, @ViewBuilder content: @escaping (Data.Element) -> Content) {
        self.data = data
        self.id = id
        self.content = content
    }

    /// Renders a ForEach node at `identity`, one row per element keyed by its id. Called by
    /// the renderer, not by plugin code.
    @inlinable
    public func _render(_ renderer: Renderer, identity: UInt32) {
        renderer._container(.forEach, identity: identity) {
            renderer._rows(data, id: id, forEach: identity, content: content)
        }
    }
}

extension ForEach where Data.Element: Identifiable, ID == Data.Element.ID {
    /// One row per element of `data`, built by `content` and identified by the element's
    /// `id`.
    @inlinable
    public init(_ data: Data, @ViewBuilder content: @escaping (Data.Element) -> Content) {
        self.init(data, id: \.id, content: content)
    }
}

extension Optional: View where Wrapped: View {
    /// An optional view is primitive: it has no body.
    public typealias Body = Never
    /// An optional view has no body; calling this traps.
    public var body: Never { fatalError("Optional has no body") }

    /// Renders the wrapped view when there is one, nothing otherwise, as two branches under
    /// `identity`. Called by the renderer, not by plugin code.
    @inlinable
    public func _render(_ renderer: Renderer, identity: UInt32) {
        switch self {
        case .some(let content): renderer._branch(identity: identity, taken: true, content: content)
        case .none: renderer._branch(identity: identity, taken: false, content: EmptyView())
        }
    }
}
