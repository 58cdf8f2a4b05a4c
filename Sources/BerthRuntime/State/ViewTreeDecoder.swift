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
            throw ViewTreeDecodingError(reason: error.reason)
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
    var reason: String
}
