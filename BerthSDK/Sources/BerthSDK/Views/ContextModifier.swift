import FoundationEssentials

extension View {
    /// Observes route contexts of type `T` while this view is rendered (the seed's
    /// view-level form). The observer is registered on the screen's router when the view
    /// first renders and removed when a render no longer contains it; `perform` is the one
    /// from the latest render.
    public func routerContext<T: RouteContext>(_ type: T.Type, perform: @escaping (T) -> Void) -> ContextObserving<Self, T> {
        ContextObserving(content: self, perform: perform)
    }
}

/// A view with a route-context observer attached (see `routerContext`).
public struct ContextObserving<Content: View, Context: RouteContext>: PrimitiveView {
    let content: Content
    let perform: (Context) -> Void

    /// Registers the context observer, then renders the content at `identity`. Called by
    /// the renderer, not by plugin code.
    public func _render(_ renderer: Renderer, identity: UInt32) {
        renderer.observeContext(Context.contextType, handler)
        content._render(renderer, identity: identity)
    }

    /// Registers the context observer, then renders the content as a container's children.
    /// Called by the renderer, not by plugin code.
    public func _renderChildren(_ renderer: Renderer, container: UInt32, index: inout Int) {
        renderer.observeContext(Context.contextType, handler)
        content._renderChildren(renderer, container: container, index: &index)
    }

    private var handler: ([UInt8]) throws -> Void {
        let perform = self.perform
        return { payload in perform(try Context.decode(payload)) }
    }
}
