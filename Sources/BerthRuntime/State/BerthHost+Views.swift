@_spi(Engine) import BerthCore
/// Rendering screens and delivering view input.
extension BerthHost {
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

    /// `render(screen:)` on the plugin's lane: the plugin renders there, and its tree is
    /// decoded and limit-checked there too; the main actor, free meanwhile for every other
    /// screen, only commits the checked tree. Refused with `.busy` while the plugin is in
    /// another call; nil when the screen closed meanwhile.
    @discardableResult
    public func renderOnLane(screen id: Int? = nil) async throws(ScreenError) -> ViewTree? {
        try await navigator.renderOnLane(screen: id)
    }

    /// Delivers `input` to the view at `viewID` (a node's `id`, its identity path, from the
    /// last render) of screen `id` (the visible screen when nil), then renders again so the
    /// tree and the state are current.
    /// The action runs on the plugin's lane, as `send`'s does; nil when the screen was closed
    /// before it returned.
    @discardableResult
    public func input(_ input: ViewInput, view viewID: String, screen id: Int? = nil) async throws(ScreenError) -> ViewTree? {
        try await navigator.inputOnLane(input, view: viewID, screen: id)
    }

    /// `input`, with the host waiting for the plugin on its own stack. `package`: for tests and
    /// checks; applications use `input`.
    @discardableResult
    package func inputBlocking(_ input: ViewInput, view viewID: String, screen id: Int? = nil) throws(ScreenError) -> ViewTree? {
        try topLevel { () throws(ScreenError) -> ViewTree? in
            guard let router = id.map({ router($0) }) ?? visibleRouter, let module = router.module else {
                throw ScreenError(.noSuchScreen, screen: id, "no screen is open")
            }
            return try module.input(input, view: viewID)
        }
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
