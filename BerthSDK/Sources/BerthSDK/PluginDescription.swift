internal import CBerth

/// What this plugin's code states about itself, for the tools (`berth pack` writes the
/// manifest from it): the id and the routes from `Plugin`, each screen's `actions`, the
/// services it registers, the contracts it provides and consumes, and the `@Persisted` keys its screens use, found by creating each
/// screen once and rendering its body with no host behind it.
enum PluginDescription {
    static func json(of plugin: Plugin) -> [UInt8] {
        let runtime = PluginRuntime.shared
        runtime.persistedKeysSeen = []
        defer { runtime.persistedKeysSeen = nil }
        var problems: [String] = []
        for type in plugin.screens {
            do {
                try describeScreen(type)
            } catch {
                problems.append("\(type.route): init(context:) threw \(error) while describing; its @Persisted keys may be missing")
            }
        }
        var writer = JSONWriter()
        writer.beginObject()
        writer.field("id", .string(plugin.id))
        writer.field("runtime", .string("swift"))
        writer.key("routes")
        writer.beginArray()
        for type in plugin.screens { writer.element(type.route) }
        writer.endArray()
        writer.key("persist")
        writer.beginArray()
        for key in (runtime.persistedKeysSeen ?? []).sorted() { writer.element(key) }
        writer.endArray()
        if let capabilities = plugin.capabilities {
            writer.key("capabilities")
            writer.beginArray()
            for capability in capabilities { writer.element(capability.rawValue) }
            writer.endArray()
        }
        writeActions(of: plugin, into: &writer)
        writer.key("services")
        writer.beginArray()
        for service in plugin.services where service.contractName == nil { writer.element(service.key(pluginID: plugin.id)) }
        writer.endArray()
        writer.key("provides")
        writer.beginArray()
        for case let name? in plugin.services.map(\.contractName) { writer.element(name) }
        writer.endArray()
        writer.key("consumes")
        writer.beginArray()
        for contract in plugin.consumes { writer.element(contract.name) }
        writer.endArray()
        writer.key("problems")
        writer.beginArray()
        for problem in problems { writer.element(problem) }
        writer.endArray()
        writer.endObject()
        return writer.bytes
    }

    /// `"actions": {route: [{"name", "summary"}]}`, for the screens that declare some.
    private static func writeActions(of plugin: Plugin, into writer: inout JSONWriter) {
        writer.beginObject(field: "actions")
        for type in plugin.screens where !type.actions.isEmpty {
            writer.key(type.route)
            writer.beginArray()
            for action in type.actions {
                writer.beginObject()
                writer.field("name", .string(action.name))
                if let summary = action.summary { writer.field("summary", .string(summary)) }
                writer.endObject()
            }
            writer.endArray()
        }
        writer.endObject()
    }

    /// Creates one instance with no host behind it and renders its body once, so every
    /// `@Persisted` it declares (on the screen or in its views) registers its key.
    private static func describeScreen(_ type: any Screen.Type) throws {
        let context = ScreenContext(handle: nil, route: type.route, argument: [])
        let screen = try PluginRuntime.shared.within(nil) { try type.init(context: context) }
        let renderer = Renderer(screen: nil, identities: IdentityTable(), batch: nil)
        PluginRuntime.shared.within(nil) { renderer.renderScreen(screen) }
    }
}

/// `berth_describe_v1` (berth.h): the plugin's description as JSON, for `berth pack` and
/// `berth validate`. Tools call it after the entry function; a running host never does.
@_cdecl("berth_describe_v1")
public func berthDescribe(_ out: UnsafeRawPointer?, _ error: UnsafeMutableRawPointer?) -> Int32 {
    let errorBuffer = error?.assumingMemoryBound(to: berth_error.self)
    guard let plugin = PluginRuntime.shared.plugin else {
        return fillError(errorBuffer, BerthError(code: .state, message: "describe before the entry function exported a Plugin"))
    }
    let bytes = PluginDescription.json(of: plugin)
    guard let sink = out?.assumingMemoryBound(to: berth_sink.self), let write = sink.pointee.write else { return berth_status(BERTH_OK) }
    return bytes.withUnsafeBufferPointer { write(sink.pointee.context, $0.baseAddress, UInt64($0.count)) }
}
