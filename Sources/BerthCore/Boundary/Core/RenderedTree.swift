/// A render pass's result, as the plugin wrote it.
package enum RenderedTree: Sendable {
    /// berth.h's binary view tree, from `render_tree`.
    case binary([UInt8])
    /// UTF-8 JSON, from a v1.0 `render`.
    case json([UInt8])
}
