/// Empty room: a blank row in a `VStack`, the width left over in an `HStack` (several
/// spacers share it).
public struct Spacer: PrimitiveView {
    /// Empty room.
    public init() {}

    /// Renders a spacer node at `identity`. Called by the renderer, not by plugin code.
    public func _render(_ renderer: Renderer, identity: UInt32) {
        renderer.spacer(identity: identity)
    }
}

/// A rule across its stack.
public struct Divider: PrimitiveView {
    /// A rule.
    public init() {}

    /// Renders a divider node at `identity`. Called by the renderer, not by plugin code.
    public func _render(_ renderer: Renderer, identity: UInt32) {
        renderer.divider(identity: identity)
    }
}

/// One choice among `options`, bound to the selected index: `step ID +` or `-` moves it,
/// `select ID INDEX` sets it; a front end shows every option and marks the selected one.
public struct Picker: PrimitiveView {
    let label: String
    let selection: Binding<Int>
    let options: [String]

    /// A picker labelled `label` over `options`, bound to the index of the selected one.
    public init(_ label: String, selection: Binding<Int>, options: [String]) {
        self.label = label
        self.selection = selection
        self.options = options
    }

    /// Renders a picker node at `identity` with one Text child per option. Called by the
    /// renderer, not by plugin code.
    public func _render(_ renderer: Renderer, identity: UInt32) {
        renderer.picker(identity: identity, label: label, selection: selection, options: options)
    }
}

/// A foreground colour for `foregroundStyle(_:)`: the eight ANSI colours. A front end
/// drops colour under `NO_COLOR`; emphasis stays.
public enum Color: UInt8, Sendable {
    case black = 1, red, green, yellow, blue, magenta, cyan, white
}

/// How a view is drawn, beyond what it is: emphasis, colour, padding, a border, and the
/// screen's title. Travels as fields of the view's own node (view-tree version 2), so a
/// modifier never changes an identity and adding `.bold()` keeps a view's state.
public struct ViewDecoration: Sendable, Equatable {
    /// `BERTH_VIEW_STYLE_*` flags: bold 1, italic 2, underline 4, dim 8, border 16.
    var flags: UInt32 = 0
    var foreground: Color?
    var padding = 0
    var title: String?

    /// The style word of berth.h, or nil when there is nothing to say.
    var styleWord: UInt32? {
        guard flags != 0 || foreground != nil || padding != 0 else { return nil }
        return flags | UInt32(foreground?.rawValue ?? 0) << 8 | UInt32(min(max(padding, 0), 255)) << 16
    }

    /// `inner` applied inside this decoration: flags add up, padding adds up, the inner
    /// colour and title win (the modifier nearest the view).
    func merged(with inner: ViewDecoration) -> ViewDecoration {
        ViewDecoration(flags: flags | inner.flags, foreground: inner.foreground ?? foreground,
                       padding: padding + inner.padding, title: inner.title ?? title)
    }
}

/// A view with a decoration: renders its content as its content would render, at the same
/// identity, with the decoration on the content's first node.
public struct ModifiedView<Content: View>: PrimitiveView {
    @usableFromInline let content: Content
    @usableFromInline let decoration: ViewDecoration

    @usableFromInline
    init(content: Content, decoration: ViewDecoration) {
        self.content = content
        self.decoration = decoration
    }

    /// Renders the content at `identity` with the decoration. Called by the renderer, not
    /// by plugin code.
    @inlinable
    public func _render(_ renderer: Renderer, identity: UInt32) {
        renderer._decorating(decoration) { content._render(renderer, identity: identity) }
    }

    /// Renders the content as a container's children, at the identities it would have
    /// undecorated. Called by the renderer, not by plugin code.
    @inlinable
    public func _renderChildren(_ renderer: Renderer, container: UInt32, index: inout Int) {
        var position = index
        renderer._decorating(decoration) { content._renderChildren(renderer, container: container, index: &position) }
        index = position
    }
}

extension View {
    /// The screen's title (a front end shows it in its header; the first title in the tree wins).
    public func title(_ title: String) -> ModifiedView<Self> { decorated(ViewDecoration(title: title)) }
    /// Bold text.
    public func bold() -> ModifiedView<Self> { decorated(ViewDecoration(flags: 1)) }
    /// Italic text.
    public func italic() -> ModifiedView<Self> { decorated(ViewDecoration(flags: 2)) }
    /// Underlined text.
    public func underline() -> ModifiedView<Self> { decorated(ViewDecoration(flags: 4)) }
    /// Dim (secondary) text.
    public func dim() -> ModifiedView<Self> { decorated(ViewDecoration(flags: 8)) }
    /// A box drawn around the view (padding goes inside it).
    public func border() -> ModifiedView<Self> { decorated(ViewDecoration(flags: 16)) }
    /// `cells` of empty room on every side (inside a border).
    public func padding(_ cells: Int = 1) -> ModifiedView<Self> { decorated(ViewDecoration(padding: max(cells, 0))) }
    /// The colour of the view's text and of everything below it without a colour of its own.
    public func foregroundStyle(_ color: Color) -> ModifiedView<Self> { decorated(ViewDecoration(foreground: color)) }

    private func decorated(_ decoration: ViewDecoration) -> ModifiedView<Self> {
        ModifiedView(content: self, decoration: decoration)
    }
}
