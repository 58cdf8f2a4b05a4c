/// A plugin's description: its id and its screens. Export it from the entry function the
/// manifest names:
///
/// ```swift
/// @_cdecl("berth_counter_entry_v1")
/// public func entry(_ host: UnsafeRawPointer?, _ plugin: UnsafeRawPointer?) -> UnsafeRawPointer? {
///     Plugin(id: "com.example.counter", screens: [CounterScreen.self]).export(host, plugin)
/// }
/// ```
public struct Plugin {
    /// Must equal the manifest's `id`.
    public var id: String
    /// The screen types, one per route.
    public var screens: [any Screen.Type]
    /// Services this plugin provides to its screens, and contracts it provides to every
    /// plugin (`Service.provides`), registered when it loads.
    public var services: [Service]
    /// The contracts this plugin calls (`context.service(_:)`); `berth pack` writes them
    /// into the manifest, and `validate` warns when no plugin in the folder provides one.
    public var consumes: [any ServiceContract.Type]
    /// The host services and OS resources its code uses; `berth pack` writes them into the
    /// manifest's `capabilities`, and the host refuses every other call (Docs/security.md).
    /// nil states nothing: the manifest then grants every host service.
    public var capabilities: [Capability]?
    /// Called before the generation is retired or unloaded.
    public var onUnload: (@Sendable () -> Void)?

    /// A plugin with `screens`, one per route, and the `capabilities` its code uses.
    public init(id: String, screens: [any Screen.Type], services: [Service] = [], consumes: [any ServiceContract.Type] = [],
                capabilities: [Capability]? = nil, onUnload: (@Sendable () -> Void)? = nil) {
        self.id = id
        self.screens = screens
        self.services = services
        self.consumes = consumes
        self.capabilities = capabilities
        self.onUnload = onUnload
    }

    /// Hands the host this plugin's `berth_plugin_v1` table. Call it once, from the entry
    /// function, passing the entry's two arguments through.
    public func export(_ host: UnsafeRawPointer?, _ plugin: UnsafeRawPointer?) -> UnsafeRawPointer? {
        PluginRuntime.shared.install(self, host: host, plugin: plugin)
    }

    /// The log function, usable outside any screen (for example from `onUnload`).
    public static func log(_ message: String, level: LogLevel = .info) {
        PluginRuntime.shared.log(message, level: level)
    }
}
