import BerthRuntime
import Foundation

/// A rendered tree as JSON for scripts (`screen --json`): type, id, fields, children.
enum ViewTreeJSON {
    private struct Node: Encodable {
        let type: String
        let id: String
        let fields: [String: String]
        let children: [Node]

        init(_ node: ViewNode) {
            type = node.type
            id = node.id
            fields = node.fields
            children = node.children.map(Node.init)
        }
    }

    static func encode(_ tree: ViewNode) -> String {
        (try? JSONText.encode(Node(tree))) ?? "null"
    }
}
