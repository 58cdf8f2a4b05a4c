@_spi(Engine) import BerthCore
/// One `@State` slot of an open screen.
public struct StateSlotInfo: Sendable, Equatable {
    /// The view's identity, namespaced by plugin and screen.
    public var identity: ViewIdentity
    /// The `@State` property's position in its view.
    public var index: UInt32
    /// The stored value's type fingerprint.
    public var fingerprint: UInt64
    /// The stored value, encoded by the plugin.
    public var bytes: [UInt8]
}
