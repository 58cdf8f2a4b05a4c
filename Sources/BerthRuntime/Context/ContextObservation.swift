/// One route-context observer: the screen it sits on and the type it observes.
public struct ContextObservation: Sendable, Equatable {
    /// The screen (router id) the observer sits on.
    public var screen: Int
    /// The plugin of that screen.
    public var pluginID: String
    /// The route of that screen.
    public var route: String
    /// The route-context type it observes.
    public var type: String
    /// Registered by the host (for example the CLI) rather than by the screen's plugin.
    public var byHost: Bool
}
