@_spi(Engine) import BerthCore
/// One route-context observer: the screen it sits on and the type it observes.
package struct ContextObservation: Sendable, Equatable {
    /// The screen (router id) the observer sits on.
    package var screen: Int
    /// The plugin of that screen.
    package var pluginID: String
    /// The route of that screen.
    package var route: String
    /// The route-context type it observes.
    package var type: String
    /// Registered by the host (for example the CLI) rather than by the screen's plugin.
    package var byHost: Bool
}
