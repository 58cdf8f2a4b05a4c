import Foundation

/// One node of a rendered view tree, as the plugin described it.
public struct ViewNode: Sendable, Equatable {
    public var type: String
    /// The identity path below the screen.
    public var id: String
    /// Scalar fields (`text`, `label`, `isOn`, `value`, `branch`), as text.
    public var fields: [String: String]
    public var children: [ViewNode]

    /// True for views that take input (`tap`, `toggle`, `type`, `step`).
    public var isInteractive: Bool { ["Button", "Toggle", "TextField", "Stepper"].contains(type) }

    /// Parses the JSON a plugin's `render` wrote (Docs/state.md describes the format).
    static func parse(_ bytes: [UInt8]) throws(ScreenError) -> ViewNode? {
        guard !bytes.isEmpty else { return nil }
        do {
            return try JSONDecoder().decode(WireNode.self, from: Data(bytes)).node
        } catch {
            throw ScreenError(.pluginFailed, screen: 0, "the rendered view tree is not valid: \(error)")
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

    /// Every node, depth first.
    public var allNodes: [ViewNode] {
        [self] + children.flatMap(\.allNodes)
    }

    /// The branch each `if` took: identity → true/false.
    var branches: [String: Bool] {
        // A plugin may repeat an id (duplicate ForEach row ids): the first node wins.
        Dictionary(allNodes.filter { $0.type == "if" }.map { ($0.id, $0.fields["branch"] == "true") }, uniquingKeysWith: { first, _ in first })
    }
}
