@_spi(Engine) import BerthCore
/// The tree of one render pass. A Swift plugin's tree stays in the binary form it arrived
/// in (berth.h's view-tree format), checked but not unpacked; a C plugin's JSON tree is
/// parsed into nodes. Either way `root` gives the nodes, made when asked for.
public struct ViewTree: Sendable {
    private enum Storage: Sendable {
        case binary(BinaryViewTree)
        case nodes(ViewNode, ViewNodeSummary)
    }

    private let storage: Storage
    /// The binary form's nodes, made on first use and kept: a front end and the host's input
    /// check look at the same tree several times between two renders.
    private let built = Locked<ViewNode??>(nil)

    init(binary: BinaryViewTree) {
        storage = .binary(binary)
    }

    init(root: ViewNode) {
        storage = .nodes(root, ViewNodeSummary(root))
    }

    /// The root node with everything below it (built from the binary form once).
    public var root: ViewNode? {
        switch storage {
        case .binary(let tree):
            built.withLock { cached in
                if let cached { return cached }
                let root = tree.root()
                cached = .some(root)
                return root
            }
        case .nodes(let root, _): root
        }
    }

    /// The screen's title: the first `title` field in pre-order, if any (`ViewNode.screenTitle`).
    /// A binary tree found it when it was checked: asking builds no nodes.
    public var screenTitle: String? {
        switch storage {
        case .binary(let tree): tree.title
        case .nodes(_, let summary): summary.title
        }
    }

    /// Every node, depth first.
    public var allNodes: [ViewNode] { root?.allNodes ?? [] }

    /// The first node, depth first, that `predicate` accepts (nothing else is collected).
    public func firstNode(where predicate: (ViewNode) -> Bool) -> ViewNode? {
        root?.firstNode(where: predicate)
    }

    /// How many nodes the tree has.
    public var nodeCount: Int {
        switch storage {
        case .binary(let tree): tree.nodeCount
        case .nodes(_, let summary): summary.count
        }
    }

    /// The branch each `if` took, by identity path.
    var branches: [String: Bool] {
        switch storage {
        case .binary(let tree): tree.branches
        case .nodes(_, let summary): summary.branches
        }
    }
}
