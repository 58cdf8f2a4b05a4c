package import CBerth

/// One method per `berth_plugin_v1` function, each marked with `HostCall` (so the plugin's
/// main-thread host calls are allowed) and each with berth.h's rule for a NULL optional
/// function, written here once for both modes: a NULL `create` is refused (the handshake
/// requires it when the manifest has routes); any other NULL function does nothing (an
/// empty tree for `render`, no bytes for `save_state`). A failure is the plugin's status and
/// the message it wrote into its `berth_error`.
///
/// `instance` is the plugin's `berth_instance *`, as `create` returned it.
extension PluginImage {
    package nonisolated func create(route: String, argument: [UInt8], screen: OpaquePointer) throws(PluginCallError) -> UnsafeMutableRawPointer {
        guard let create = table.table.create else { throw PluginCallError(status: Int32(BERTH_ERR_UNSUPPORTED), message: "\(pluginID) has no create") }
        var error = BerthErrorBuffer.make()
        var created: UnsafeMutableRawPointer?
        let status = HostCall.run {
            argument.withUnsafeBufferPointer { buffer in
                create(screen, route, berth_bytes(data: buffer.baseAddress, length: UInt64(buffer.count)), &created, &error)
            }
        }
        guard status == BERTH_OK, let created else { throw Self.failure(error, status) }
        return created
    }

    /// Nonisolated: called on the main actor or on the plugin's lane (never both at once).
    package nonisolated func destroy(_ instance: UnsafeMutableRawPointer?) {
        guard let destroy = table.table.destroy else { return }
        HostCall.run { destroy(instance) }
    }

    /// Nonisolated: called on the main actor or on the plugin's lane (never both at once).
    package nonisolated func activate(_ instance: UnsafeMutableRawPointer?) throws(PluginCallError) {
        guard let activate = table.table.activate else { return }
        try Self.check { activate(instance, $0) }
    }

    /// Nonisolated: called on the main actor or on the plugin's lane (never both at once).
    package nonisolated func deactivate(_ instance: UnsafeMutableRawPointer?) throws(PluginCallError) {
        guard let deactivate = table.table.deactivate else { return }
        try Self.check { deactivate(instance, $0) }
    }

    /// Nonisolated: called on the main actor or on the plugin's lane (never both at once).
    package nonisolated func screenEvent(_ instance: UnsafeMutableRawPointer?, code: Int32, flag: Bool) {
        guard let screenEvent = table.table.screen_event else { return }
        HostCall.run { screenEvent(instance, code, flag ? 1 : 0) }
    }

    /// Nonisolated: called on the main actor or on the plugin's lane (never both at once).
    package nonisolated func action(_ instance: UnsafeMutableRawPointer?, name: String, payload: [UInt8]) throws(PluginCallError) {
        guard let action = table.table.action else { return }
        try Self.check(payload) { action(instance, name, $0, $1) }
    }

    /// Nonisolated: called on the main actor or on the plugin's lane (never both at once).
    package nonisolated func delegateReceived(_ instance: UnsafeMutableRawPointer?, from child: UInt64, action: String, payload: [UInt8]) throws(PluginCallError) {
        guard let receive = table.table.delegate_received else { return }
        try Self.check(payload) { receive(instance, child, action, $0, $1) }
    }

    /// Nonisolated: called on the main actor or on the plugin's lane (never both at once).
    package nonisolated func contextReceived(_ instance: UnsafeMutableRawPointer?, type: String, payload: [UInt8]) throws(PluginCallError) {
        guard let receive = table.table.context_received else { return }
        try Self.check(payload) { receive(instance, type, $0, $1) }
    }

    /// The view tree by the table's best function: `render_tree` with the screen's `slots`
    /// in one batch (read only when it has one), else a v1.0 `render`.
    package nonisolated func render(_ instance: UnsafeMutableRawPointer?, slots: () -> [RenderSlot]) throws(PluginCallError) -> RenderedTree {
        guard functions.contains(.renderTree) else { return .json(try render(instance)) }
        return .binary(try renderTree(instance, slots: slots()))
    }

    /// One v1.0 `render` (its slots are read through `state_read`): UTF-8 JSON, empty when
    /// the table has no `render` (the screen draws nothing).
    package nonisolated func render(_ instance: UnsafeMutableRawPointer?) throws(PluginCallError) -> [UInt8] {
        guard let render = table.table.render else { return [] }
        let collected = SinkBuffer()
        try Self.check { error in collected.withSink { render(instance, $0, error) } }
        return collected.bytes
    }

    /// One `render_tree` over the screen's `slots`: the binary view tree. Refused when the
    /// table has none (ask `render(_:slots:)`, which falls back to `render`).
    package nonisolated func renderTree(_ instance: UnsafeMutableRawPointer?, slots: [RenderSlot]) throws(PluginCallError) -> [UInt8] {
        guard let renderTree = table.table.render_tree else {
            throw PluginCallError(status: Int32(BERTH_ERR_UNSUPPORTED), message: "\(pluginID) has no render_tree")
        }
        let collected = SinkBuffer()
        try Self.check { error in RenderInput.with(slots) { input in collected.withSink { renderTree(instance, input, $0, error) } } }
        return collected.bytes
    }

    package func saveState(_ instance: UnsafeMutableRawPointer?) throws(PluginCallError) -> [UInt8] {
        guard let save = table.table.save_state else { return [] }
        let collected = SinkBuffer()
        try Self.check { error in collected.withSink { save(instance, $0, error) } }
        return collected.bytes
    }

    package func restoreState(_ instance: UnsafeMutableRawPointer?, _ bytes: [UInt8]) throws(PluginCallError) {
        guard let restore = table.table.restore_state else { return }
        try Self.check(bytes) { restore(instance, $0, $1) }
    }

    // MARK: The error buffer

    private nonisolated static func failure(_ error: berth_error, _ status: berth_status) -> PluginCallError {
        PluginCallError(status: status, message: BerthErrorBuffer.message(of: error, status: status))
    }

    /// Calls a table function that reports through a `berth_error`.
    private nonisolated static func check(_ function: (UnsafeMutablePointer<berth_error>) -> berth_status) throws(PluginCallError) {
        var error = BerthErrorBuffer.make()
        let status = HostCall.run { function(&error) }
        guard status == BERTH_OK else { throw failure(error, status) }
    }

    /// Same, lending `payload` as `berth_bytes` for the call.
    private nonisolated static func check(_ payload: [UInt8], _ function: (berth_bytes, UnsafeMutablePointer<berth_error>) -> berth_status) throws(PluginCallError) {
        try check { error in
            payload.withUnsafeBufferPointer { function(berth_bytes(data: $0.baseAddress, length: UInt64($0.count)), error) }
        }
    }
}
