internal import CBerth

/// How long a service instance lives.
public enum ServiceScope: Int32, Sendable {
    /// Host lifetime (until this plugin unloads).
    case singleton = 0
    /// One per open screen, released when the screen is removed for good.
    case screen = 1
    /// One per session (`session begin ID` … `session end`).
    case session = 2
    /// One per action, context delivery or host command.
    case request = 3
}

/// A service this plugin provides to its own screens, as a Swift type:
/// `.scoped(ImageCache.self, .screen) { ImageCache() }`. The host caches one instance per
/// scope and releases it (its `deinit` runs) when the scope ends or the plugin unloads.
public struct Service {
    let typeName: String
    let scope: ServiceScope
    /// A contract's name (its key, host-wide), or nil for a type of this plugin's own.
    var contractName: String? = nil
    let make: () throws -> AnyObject
    /// Answers a contract's calls on an instance `make` made (`Service.provides`).
    var serve: ((AnyObject, inout ServiceCall) async throws -> Void)? = nil

    /// A service of type `T` with one instance per `scope`, created by `make` on first use.
    public static func scoped<T: AnyObject>(_ type: T.Type, _ scope: ServiceScope, make: @escaping () throws -> T) -> Service {
        Service(typeName: _typeName(type, qualified: true), scope: scope, make: make)
    }

    /// The key the host registers it under.
    func key(pluginID: String) -> String {
        contractName ?? ServiceKeys.key(pluginID: pluginID, typeName: typeName)
    }
}

/// Keys of typed services: `<plugin id>/<Module.Type>`, so two plugins' (or two modules')
/// same-named types never meet. Built when used: the plugin id is known once the entry function ran.
enum ServiceKeys {
    static func key(pluginID: String, typeName: String) -> String {
        "\(pluginID)/\(typeName)"
    }

    static func key<T>(for type: T.Type) -> String {
        key(pluginID: PluginRuntime.shared.plugin?.id ?? "", typeName: _typeName(type, qualified: true))
    }
}

/// Keeps a service's factory (and a contract's `serve`) alive for as long as the plugin
/// image is loaded.
final class ServiceBox {
    let make: () throws -> AnyObject
    let key: String
    let serve: ((AnyObject, inout ServiceCall) async throws -> Void)?
    init(_ service: Service, key: String) {
        make = service.make
        serve = service.serve
        self.key = key
    }
}

extension PluginRuntime {
    /// Registers the plugin's typed services with the host (from the entry function).
    func registerServices(_ services: [Service]) {
        guard let register = hostFunction(\.service_register) else { return }
        for service in services {
            let serviceKey = service.key(pluginID: plugin?.id ?? "")
            let box = Unmanaged.passRetained(ServiceBox(service, key: serviceKey)).toOpaque()
            let key = Array(serviceKey.utf8CString)
            key.withUnsafeBufferPointer { keyPointer in
                var table = berth_service_v1()
                table.struct_size = UInt32(MemoryLayout<berth_service_v1>.size)
                table.scope = service.scope.rawValue
                table.key = keyPointer.baseAddress
                table.context = box
                table.create = { context, out, errorBuffer in
                    guard let context else { return berth_status(BERTH_ERR_INVALID_ARGUMENT) }
                    do {
                        let instance = try Unmanaged<ServiceBox>.fromOpaque(context).takeUnretainedValue().make()
                        out?.pointee = Unmanaged.passRetained(instance).toOpaque()
                        return berth_status(BERTH_OK)
                    } catch {
                        return fillError(errorBuffer, BerthError(code: .failed, message: "\(error)"))
                    }
                }
                table.release = { _, instance in
                    guard let instance else { return }
                    Unmanaged<AnyObject>.fromOpaque(instance).release()
                }
                if service.serve != nil { table.call = answerContractCall }
                var error = berth_error()
                error.struct_size = UInt32(MemoryLayout<berth_error>.size)
                if register(pluginHandle, &table, &error) != BERTH_OK {
                    let message = withUnsafeBytes(of: &error.message) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
                    log("service \(serviceKey) not registered: \(message)", level: .error)
                }
            }
        }
    }
}

extension ScreenContext {
    /// This plugin's service of type `T` in the scope it was registered for (the host's
    /// current screen, session or request scope). Throws the host's diagnostic when no
    /// such scope is current.
    public func resolve<T: AnyObject>(_ type: T.Type) throws -> T {
        let pointer = try resolveService(ServiceKeys.key(for: type))
        return Unmanaged<T>.fromOpaque(pointer).takeUnretainedValue()
    }

    /// Another plugin's service by key: a pointer to the C function table its shared header
    /// declares. Valid until that scope ends or its provider unloads.
    public func resolveService(_ key: String) throws -> UnsafeMutableRawPointer {
        let runtime = PluginRuntime.shared
        guard let resolve = runtime.hostFunction(\.service_resolve) else { throw BerthError.hostLacks("service_resolve") }
        var instance: UnsafeMutableRawPointer?
        try runtime.check { error in resolve(handle, key, &instance, error) }
        guard let instance else { throw BerthError(code: .notFound, message: "service \(key) resolved to nothing") }
        return instance
    }

    /// Begins a session scope named `id` (ending the current one).
    public func beginSession(_ id: String) throws {
        let runtime = PluginRuntime.shared
        guard let begin = runtime.hostFunction(\.session_begin) else { throw BerthError.hostLacks("session_begin") }
        try runtime.check { error in begin(runtime.pluginHandle, id, error) }
    }

    /// Ends the current session scope, releasing its instances.
    public func endSession() throws {
        let runtime = PluginRuntime.shared
        guard let end = runtime.hostFunction(\.session_end) else { throw BerthError.hostLacks("session_end") }
        try runtime.check { error in end(runtime.pluginHandle, error) }
    }
}
