@_spi(Engine) import BerthCore
internal import CBerth

/// Turns the bytes of one render, on their own, into a view tree: berth.h's binary format
/// (render_tree; identities defined in this tree only) or the v1.0 JSON form. The host's
/// render pass goes through `StateStorage.endRenderPass(with:)`, which also keeps the
/// identities earlier trees defined; this is the same pair of decoders for the fuzz
/// harness (Docs/fuzzing.md) and its corpus tests.
enum ViewTreeDecoder {
    /// The tree, or nil for an empty render.
    static func decode(_ bytes: [UInt8]) throws(ViewTreeDecodingError) -> ViewNode? {
        guard !bytes.isEmpty else { return nil }
        do {
            guard isBinary(bytes) else { return try LegacyJSONTree.parse(bytes) }
            let header = try BinaryViewTree.header(bytes)
            return try BinaryViewTree(bytes: bytes, header: header, paths: header.definitions).root()
        } catch {
            throw ViewTreeDecodingError(message: error.message)
        }
    }

    /// Whether `bytes` start with the binary tree's magic.
    private static func isBinary(_ bytes: [UInt8]) -> Bool {
        guard bytes.count >= 4 else { return false }
        let magic = UInt32(bytes[0]) | UInt32(bytes[1]) << 8 | UInt32(bytes[2]) << 16 | UInt32(bytes[3]) << 24
        return magic == BERTH_VIEW_TREE_MAGIC
    }
}

/// Why rendered bytes are not a view tree.
struct ViewTreeDecodingError: Error, Sendable {
    /// One line naming the field or byte at fault.
    var message: String
}

/// What one render may hand the host, in either tree form (Docs/security.md): a plugin in a
/// worker must not freeze the host's main thread or grow it by hundreds of megabytes with
/// one tree. Past a limit the render is refused with one line, before the tree is built.
enum RenderLimits {
    /// The rendered bytes: 16 MiB.
    static let maximumBytes = 16 << 20
    /// Views in one tree: 200,000 (the stress fixture's screen of 10,000 rows has 60,000).
    static let maximumNodes = 200_000
    /// Values and member names in one JSON tree: 2,000,000, ten per view at the view limit
    /// (a text view is 7), so a JSON tree within the limits costs the host about what the
    /// largest legal one does, whatever else it holds.
    static let maximumJSONTokens = 2_000_000
    /// One text, label or identity: 1 MiB.
    static let maximumStringBytes = 1 << 20

    /// Refuses `bytes` past `maximumBytes`.
    static func checkSize(_ bytes: [UInt8]) throws(ViewTreeError) {
        guard bytes.count <= maximumBytes else {
            throw ViewTreeError("the render is \(bytes.count) bytes, over the limit of \(maximumBytes)")
        }
    }

    static func nodesError(_ count: Int) -> ViewTreeError {
        ViewTreeError("the tree has \(count) views, over the limit of \(maximumNodes)")
    }

    static func stringError(_ what: String, _ count: Int) -> ViewTreeError {
        ViewTreeError("a \(what) of \(count) bytes is over the limit of \(maximumStringBytes)")
    }
}
