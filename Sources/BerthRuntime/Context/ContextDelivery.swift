@_spi(Engine) import BerthCore
/// What a `context` or `terminate` did.
@_spi(Engine) public struct ContextDelivery: Sendable, Equatable {
    /// Observers that received the value (screens and host handlers), in order.
    package var receivers: [Int] {
        get { Array(receiverIDs) }
        set { receiverIDs = ContextReceivers(newValue) }
    }
    /// The same, kept inline: a dispatch to a few observers allocates nothing.
    var receiverIDs: ContextReceivers
    /// Screens removed by `terminate`'s navigation.
    package var closed: [Int]
    /// Which rule `terminate` applied.
    package var navigation: TerminateNavigation
}

/// The navigation step of `terminate`.
@_spi(Engine) public enum TerminateNavigation: String, Sendable, Equatable {
    /// `context` only, or terminate on an empty, non-presented stack.
    case none
    /// Popped back to the nearest earlier screen of the stack observing the type.
    case poppedToAnchor
    /// Closed the presented stack the sender is in.
    case dismissed
    /// Went back one screen.
    case back
}
