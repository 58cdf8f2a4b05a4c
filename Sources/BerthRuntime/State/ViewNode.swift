@_spi(Engine) import BerthCore
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

    /// True for views that take input (`tap`, `toggle`, `type`, `step`, `select`).
    public var isInteractive: Bool { ["Button", "Toggle", "TextField", "Stepper", "Picker"].contains(type) }

    /// How the view asks to be drawn (emphasis, colour, padding, border).
    public var style: ViewStyle { ViewStyle(fields: fields) }

    /// The screen's title: the first `title` in pre-order, if any.
    public var screenTitle: String? {
        if let title = fields["title"] { return title }
        for child in children { if let title = child.screenTitle { return title } }
        return nil
    }

    /// Every node, depth first.
    public var allNodes: [ViewNode] {
        [self] + children.flatMap(\.allNodes)
    }

    /// The first node, depth first from this one, that `predicate` accepts.
    public func firstNode(where predicate: (ViewNode) -> Bool) -> ViewNode? {
        if predicate(self) { return self }
        for child in children { if let found = child.firstNode(where: predicate) { return found } }
        return nil
    }
}
