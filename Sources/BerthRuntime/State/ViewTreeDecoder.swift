import Foundation

/// Turns the bytes a plugin's `render` wrote into a view tree. The format is JSON today
/// (Docs/state.md); this is the one place that knows it, so another wire format can take
/// its place without touching the callers or the fuzz harness (Docs/fuzzing.md), which
/// both call `decode`.
enum ViewTreeDecoder {
    /// The tree, or nil for an empty render.
    static func decode(_ bytes: [UInt8]) throws(ViewTreeDecodingError) -> ViewNode? {
        guard !bytes.isEmpty else { return nil }
        do {
            return try JSONDecoder().decode(WireNode.self, from: Data(bytes)).node
        } catch {
            throw ViewTreeDecodingError(reason: "\(error)")
        }
    }

    /// The wire form: the fields the host uses (others are ignored); a node without type or
    /// id, or a field of the wrong type, makes the tree invalid.
    private struct WireNode: Decodable {
        let type: String
        let id: String
        let text: String?
        let label: String?
        let isOn: Bool?
        let value: Int?
        let branch: Bool?
        let children: [WireNode]?

        var node: ViewNode {
            var fields: [String: String] = [:]
            if let text { fields["text"] = text }
            if let label { fields["label"] = label }
            if let isOn { fields["isOn"] = isOn ? "true" : "false" }
            if let value { fields["value"] = String(value) }
            if let branch { fields["branch"] = branch ? "true" : "false" }
            return ViewNode(type: type, id: id, fields: fields, children: (children ?? []).map(\.node))
        }
    }
}

/// Why rendered bytes are not a view tree.
struct ViewTreeDecodingError: Error, Sendable {
    var reason: String
}
