/// The tree of one render pass. A Swift plugin's tree stays in the binary form it arrived
/// in (berth.h's view-tree format), checked but not unpacked; a C plugin's JSON tree is
/// parsed into nodes. Either way `root` gives the nodes, made when asked for.
public struct ViewTree: Sendable {
    private enum Storage: Sendable {
        case binary(BinaryViewTree)
        case nodes(ViewNode)
    }

    private let storage: Storage

    init(binary: BinaryViewTree) {
        storage = .binary(binary)
    }

    init(root: ViewNode) {
        storage = .nodes(root)
    }

    /// The root node with everything below it (built from the binary form on each call).
    public var root: ViewNode? {
        switch storage {
        case .binary(let tree): tree.root()
        case .nodes(let root): root
        }
    }

    /// Every node, depth first.
    public var allNodes: [ViewNode] { root?.allNodes ?? [] }

    /// How many nodes the tree has.
    public var nodeCount: Int {
        switch storage {
        case .binary(let tree): tree.nodeCount
        case .nodes(let root): root.allNodes.count
        }
    }

    /// The branch each `if` took, by identity path.
    var branches: [String: Bool] {
        switch storage {
        case .binary(let tree): tree.branches
        case .nodes(let root): root.branches
        }
    }
}
