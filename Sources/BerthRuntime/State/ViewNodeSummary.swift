/// What the host asks of a parsed tree again and again (a front end's title on every
/// frame, the branches at each commit), found in one walk when the tree is made: on the
/// plugin's lane for a render, so the main actor never walks a large tree (`ViewTree`).
struct ViewNodeSummary: Sendable {
    /// The first `title` field in pre-order, if any.
    private(set) var title: String?
    /// How many nodes the tree has.
    private(set) var count = 0
    /// The branch each `if` took, by identity path; the first of a repeated id wins.
    private(set) var branches: [String: Bool] = [:]

    init(_ root: ViewNode) {
        var pending = [root]
        while let node = pending.popLast() {
            count += 1
            if title == nil, let text = node.fields["title"] { title = text }
            // A plugin may repeat an id (duplicate ForEach row ids): the first node wins.
            if node.type == "if", branches[node.id] == nil { branches[node.id] = node.fields["branch"] == "true" }
            // Pre-order: the first child is taken next.
            pending.append(contentsOf: node.children.reversed())
        }
    }
}
