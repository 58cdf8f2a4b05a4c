@_spi(Engine) import BerthCore
internal import CBerth

/// A screen lifecycle event as the host delivers it (berth.h `BERTH_EVENT_*`).
public enum ScreenLifecycleEvent: Sendable, Equatable, CustomStringConvertible {
    /// Once, right after the plugin's `create`, before activation.
    case didLoad
    /// The screen is about to become the visible one (true the first time this instance appears).
    case willAppear(isPresentedInitially: Bool)
    /// The screen became the visible one (true the first time this instance appears).
    case didAppear(isPresentedInitially: Bool)
    /// The screen is about to stop being the visible one (true when it is being removed for good).
    case willDisappear(isRemovedPermanently: Bool)
    /// The screen stopped being the visible one (true when it was removed for good).
    case didDisappear(isRemovedPermanently: Bool)

    /// The event's code and flag for `berth_plugin_v1.screen_event`.
    var code: (event: Int32, flag: Bool) {
        switch self {
        case .didLoad: (Int32(BERTH_EVENT_DID_LOAD), false)
        case .willAppear(let initially): (Int32(BERTH_EVENT_WILL_APPEAR), initially)
        case .didAppear(let initially): (Int32(BERTH_EVENT_DID_APPEAR), initially)
        case .willDisappear(let permanently): (Int32(BERTH_EVENT_WILL_DISAPPEAR), permanently)
        case .didDisappear(let permanently): (Int32(BERTH_EVENT_DID_DISAPPEAR), permanently)
        }
    }

    /// The event as the log prints it (`willAppear(isPresentedInitially: true)`).
    public var description: String {
        switch self {
        case .didLoad: "didLoad"
        case .willAppear(let initially): "willAppear(isPresentedInitially: \(initially))"
        case .didAppear(let initially): "didAppear(isPresentedInitially: \(initially))"
        case .willDisappear(let permanently): "willDisappear(isRemovedPermanently: \(permanently))"
        case .didDisappear(let permanently): "didDisappear(isRemovedPermanently: \(permanently))"
        }
    }
}
