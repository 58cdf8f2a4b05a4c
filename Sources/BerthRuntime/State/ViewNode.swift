/// One node of a rendered view tree, as the plugin described it (made from the binary tree
/// on demand, or parsed from a C plugin's JSON).
public struct ViewNode: Sendable, Equatable {
    /// The view's type (`Text`, `Button`, `VStack`, …).
    public var type: String
    /// The identity path below the screen.
    public var id: String
    /// Scalar fields (`text`, `label`, `isOn`, `value`, `branch`), as text.
    public var fields: [String: String]
    /// The views it contains, in order.
    public var children: [ViewNode]

    /// True for views that take input (`tap`, `toggle`, `type`, `step`).
    public var isInteractive: Bool { ["Button", "Toggle", "TextField", "Stepper"].contains(type) }

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
