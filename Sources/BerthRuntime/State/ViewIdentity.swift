@_spi(Engine) import BerthCore
/// A view's structural identity: the plugin, the module instance, then the path built
/// while rendering (`com.example.counter#7/CounterScreen/VStack.1/Stepper`). The plugin and
/// instance namespace means two plugins — or two instances of one screen — with a
/// same-named view never share state.
public struct ViewIdentity: Hashable, Sendable, CustomStringConvertible {
    /// The plugin whose screen holds the view.
    public let pluginID: String
    /// The module instance (screen) number.
    public let instance: Int
    /// The path below the screen, as the SDK builds it.
    public let path: String

    /// The identity of the view at `path` in screen `instance` of `pluginID`.
    public init(pluginID: String, instance: Int, path: String) {
        self.pluginID = pluginID
        self.instance = instance
        self.path = path
    }

    /// `plugin#instance/path`.
    public var description: String { "\(pluginID)#\(instance)/\(path)" }

    /// True when `other` lies below this identity in the same screen: a strict ancestor
    /// (a view is not its own ancestor), also across an `if` branch (`…/if#true…`) or a
    /// container slot (`…/VStack.1/…`).
    public func isAncestor(of other: ViewIdentity) -> Bool {
        guard pluginID == other.pluginID, instance == other.instance, other.path.count > path.count,
              other.path.hasPrefix(path)
        else { return false }
        let next = other.path[other.path.index(other.path.startIndex, offsetBy: path.count)]
        return next == "/" || next == "." || next == "#"
    }
}
