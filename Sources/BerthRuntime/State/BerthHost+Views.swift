/// Rendering screens and delivering view input.
extension BerthHost {
    /// The kinds of input a rendered view takes.
    public enum ViewInputKind: String, Sendable, CaseIterable {
        /// Tap a button; flip a toggle; type text into a field; step a stepper or a picker
        /// (`+`, `-`); select a picker's option (its index).
        case tap, toggle, type, step, select
    }

    /// One render pass of screen `id` (the visible screen when nil): the plugin's tree, its
    /// state GC, branch invalidation. Nil when the plugin does not render.
    @discardableResult
    public func render(screen id: Int? = nil) throws(ScreenError) -> ViewTree? {
        try topLevel { () throws(ScreenError) -> ViewTree? in
            guard let router = id.map({ router($0) }) ?? visibleRouter, let module = router.module else {
                throw ScreenError(.noSuchScreen, screen: id, id.map { "no open screen \($0)" } ?? "no screen is open")
            }
            return try module.render()
        }
    }

    /// Delivers input to the view at `viewID` (an identity path from the last render) of
    /// screen `id`, then renders again so the tree and the state are current.
    @discardableResult
    public func input(_ kind: ViewInputKind, view viewID: String, value: String = "", screen id: Int? = nil) throws(ScreenError) -> ViewTree? {
        try topLevel { () throws(ScreenError) -> ViewTree? in
            guard let router = id.map({ router($0) }) ?? visibleRouter, let module = router.module else {
                throw ScreenError(.noSuchScreen, screen: id, "no screen is open")
            }
            if module.lastTree == nil { try module.render() }
            guard let node = module.lastTree?.firstNode(where: { $0.id == viewID }) else {
                throw ScreenError(.noSuchScreen, screen: router.id, "screen \(router.id) has no view \(viewID) (the rendered tree lists its views)")
            }
            guard node.isInteractive else {
                throw ScreenError(.takesNoInput, screen: router.id, "\(viewID) is a \(node.type); it takes no input")
            }
            let payload = Array(viewID.utf8) + [0] + Array(value.utf8)
            try module.handle(action: "berth.\(kind.rawValue)", payload: payload)
            return try module.render()
        }
    }

    /// One `@State` slot of an open screen.
    public struct StateSlotInfo: Sendable, Equatable {
        /// The view's identity, namespaced by plugin and screen.
        public var identity: ViewIdentity
        /// The `@State` property's position in its view.
        public var index: UInt32
        /// The stored value's type fingerprint.
        public var fingerprint: UInt64
        /// The stored value, encoded by the plugin.
        public var bytes: [UInt8]
    }

    /// Every state slot of every open screen, in tree order then identity order.
    public var stateSlots: [StateSlotInfo] {
        openRouters.flatMap { router -> [StateSlotInfo] in
            guard let module = router.module else { return [] }
            return module.stateStorage.snapshot.sorted(by: { $0.key < $1.key }).map { key, slot in
                StateSlotInfo(identity: ViewIdentity(pluginID: router.pluginID, instance: router.id, path: key.identity),
                              index: key.index, fingerprint: slot.fingerprint, bytes: slot.bytes)
            }
        }
    }

    /// Persisted keys per plugin with their sizes (empty when persistence is off).
    public func persistedKeys() -> [(plugin: String, key: String, bytes: Int)] {
        ((try? persistentStore?.keys()) ?? []).map { ($0.plugin, $0.key, $0.bytes) }
    }

    /// The stored bytes of one persisted key, as the plugin wrote them (nil when absent or
    /// persistence is off).
    public func persistedValue(plugin: String, key: String) -> [UInt8]? {
        try? persistentStore?.read(plugin: plugin, key: key)
    }
}
