@_spi(Engine) import BerthCore
/// An application's way to a plugin's C exports (the manifest's `exports`), by plugin id:
/// the generation that answers stays inside the host.
extension BerthHost {
    /// Calls the export `symbol` of plugin `id` with `arguments`. A plugin whose worker
    /// crashed is started again within its crash budget first, and a lazy one is loaded. Throws
    /// `pluginFailed` when `id` is not loaded or cannot start, `unknownSymbol` when it has no
    /// such export, and `arity` when the number of arguments does not fit its signature.
    public func call(_ symbol: String, of id: String, arguments: [FFIValue]) throws(FFIError) -> FFIValue {
        let generation: PluginGeneration?
        do {
            generation = try generationForUse(of: id)
        } catch {
            throw FFIError(.pluginFailed, error.description)
        }
        guard let generation else { throw FFIError(.pluginFailed, "\(id) is not loaded; nothing is called") }
        return try generation.call(symbol, arguments: arguments)
    }
}
