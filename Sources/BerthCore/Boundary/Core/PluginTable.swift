package import CBerth

/// The plugin's `berth_plugin_v1`, read by the versioning rule and checked at the handshake.
///
/// The host copies `min(struct_size, sizeof)` bytes into a zeroed table of its own layout:
/// fields the plugin did not have (an older minor revision) read as NULL, fields the host
/// does not know (a newer minor revision) are never touched.
package struct PluginTable {
    package let table: berth_plugin_v1
    /// The ABI version the plugin reported.
    package let abi: ABIVersion
    /// The plugin's `struct_size`.
    package let size: Int
    /// The table's address in the plugin's memory.
    package let address: UnsafeRawPointer

    /// BERTH_PLUGIN_V1_MIN_SIZE: the end of `unload`, v1.0's last field. A later minor
    /// revision appends fields after it but never raises this minimum.
    package static let v1MinimumSize = MemoryLayout<berth_plugin_v1>.offset(of: \berth_plugin_v1.unload)! + MemoryLayout<UnsafeRawPointer>.size

    /// Reads and checks the table returned by the entry function.
    package static func handshake(
        _ pointer: UnsafePointer<berth_plugin_v1>?, manifest: PluginManifest, entry: String
    ) throws(LoaderError) -> PluginTable {
        let plugin = manifest.id
        guard let pointer else {
            throw LoaderError(.handshakeFailed, plugin: plugin, "entry \(entry) returned NULL (the plugin refused to load: an ABI it does not support, or see its log)")
        }
        let size = Int(pointer.pointee.struct_size)
        let minimum = Self.v1MinimumSize
        guard size >= minimum else {
            throw LoaderError(.handshakeFailed, plugin: plugin,
                              "berth_plugin_v1 from \(entry) is \(size) bytes, shorter than the v1.0 minimum of \(minimum)")
        }
        let abi = ABIVersion(packed: pointer.pointee.abi_version)
        guard abi.major == HostABI.version.major else {
            let relation = abi.major > HostABI.version.major ? "too new" : "too old"
            throw LoaderError(.handshakeFailed, plugin: plugin,
                              "plugin ABI \(abi) is \(relation) for this host (ABI \(HostABI.version), accepts \(HostABI.supportedRange))")
        }
        // A library of a later minor than its manifest names is fine: minors only append.
        guard abi.major == manifest.abi.major, abi.minor >= manifest.abi.minor else {
            throw LoaderError(.handshakeFailed, plugin: plugin,
                              "the library reports ABI \(abi) but the manifest says \(manifest.abi)")
        }
        var table = berth_plugin_v1()
        withUnsafeMutableBytes(of: &table) { target in
            target.copyMemory(from: UnsafeRawBufferPointer(start: pointer, count: min(size, target.count)))
        }
        guard let idPointer = table.plugin_id else {
            throw LoaderError(.handshakeFailed, plugin: plugin, "berth_plugin_v1.plugin_id is NULL")
        }
        let reportedID = String(cString: idPointer)
        guard reportedID == manifest.id else {
            throw LoaderError(.handshakeFailed, plugin: plugin, "the library says it is '\(reportedID)', the manifest says '\(manifest.id)'")
        }
        if !manifest.routes.isEmpty {
            guard table.create != nil, table.destroy != nil else {
                throw LoaderError(.handshakeFailed, plugin: plugin,
                                  "the manifest declares routes but berth_plugin_v1.create or .destroy is NULL")
            }
        }
        return PluginTable(table: table, abi: abi, size: size, address: UnsafeRawPointer(pointer))
    }

    /// What the seam reports of this table.
    package var handshake: PluginHandshake {
        var functions: PluginHandshake.Functions = []
        if table.create != nil { functions.insert(.create) }
        if table.activate != nil { functions.insert(.activate) }
        if table.deactivate != nil { functions.insert(.deactivate) }
        if table.screen_event != nil { functions.insert(.screenEvent) }
        if table.action != nil { functions.insert(.action) }
        if table.render != nil { functions.insert(.render) }
        if table.save_state != nil { functions.insert(.saveState) }
        if table.restore_state != nil { functions.insert(.restoreState) }
        if table.context_received != nil { functions.insert(.contextReceived) }
        if table.delegate_received != nil { functions.insert(.delegateReceived) }
        if table.unload != nil { functions.insert(.unload) }
        if table.destroy != nil { functions.insert(.destroy) }
        if table.render_tree != nil { functions.insert(.renderTree) }
        return PluginHandshake(abi: abi, tableSize: size, functions: functions, tableAddress: UInt(bitPattern: address))
    }
}
