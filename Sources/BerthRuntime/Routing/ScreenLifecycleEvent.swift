internal import CBerth

/// A screen lifecycle event as the host delivers it (berth.h `BERTH_EVENT_*`).
public enum ScreenLifecycleEvent: Sendable, Equatable, CustomStringConvertible {
    case didLoad
    case willAppear(isPresentedInitially: Bool)
    case didAppear(isPresentedInitially: Bool)
    case willDisappear(isRemovedPermanently: Bool)
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
