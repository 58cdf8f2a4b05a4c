@_spi(Engine) import BerthCore
/// An event that is illegal in the current lifecycle state (API misuse, never a crash).
public struct LifecycleError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The screen whose module instance refused the event, as fields.
    public struct Subject: Sendable, Hashable, CustomStringConvertible {
        /// The screen's router id.
        public var screen: Int
        /// The plugin whose screen it is.
        public var pluginID: String
        /// The route it was opened for.
        public var route: String

        /// The screen `screen`, opened for `pluginID`'s `route`.
        public init(screen: Int, pluginID: String, route: String) {
            self.screen = screen
            self.pluginID = pluginID
            self.route = route
        }

        /// `screen 7 (com.example.counter/main)`.
        public var description: String { "screen \(screen) (\(pluginID)/\(route))" }
    }

    /// An event a module instance can refuse.
    public enum Event: Sendable, Hashable, CustomStringConvertible {
        /// Activation of a released instance.
        case activate
        /// Release of an instance that is still active (the close sequence deactivates first).
        case release

        /// The event as a refusal words it.
        public var description: String {
            switch self {
            case .activate: "activate"
            case .release: "release (deactivate first)"
            }
        }
    }

    /// What the state machine belongs to.
    public var subject: Subject
    /// The state it was in.
    public var state: ScreenState
    /// The event that was refused.
    public var event: Event

    /// The refusal of `event` by `subject` while in `state`.
    public init(subject: Subject, state: ScreenState, event: Event) {
        self.subject = subject
        self.state = state
        self.event = event
    }

    /// `subject: cannot event while state`.
    public var description: String { "\(subject): cannot \(event) while \(state.rawValue)" }
}
