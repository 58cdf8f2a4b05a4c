@_spi(Engine) import BerthCore
/// View input: what `BerthHost.input` delivers to a screen.
extension ModuleInstance {
    /// Delivers `input` to the view at `viewID` (an identity path from the last render,
    /// rendering first when there is none) as berth.h's view-input action (`ViewInput`'s
    /// `actionName` and `payload`), then renders again so the tree and the state are current.
    func input(_ input: ViewInput, view viewID: String) throws(ScreenError) -> ViewTree? {
        if lastTree == nil { try render() }
        guard let node = lastTree?.firstNode(where: { $0.id == viewID }) else {
            throw ScreenError(.noSuchScreen, screen: id, "screen \(id) has no view \(viewID) (the rendered tree lists its views)")
        }
        guard node.isInteractive else {
            throw ScreenError(.takesNoInput, screen: id, "\(viewID) is a \(node.type); it takes no input")
        }
        try handle(action: input.actionName, payload: input.payload(view: viewID), describedAs: input.described(on: node))
        return try render()
    }

    /// `input(_:view:)` on the plugin's lane (see `handleOnLane`): nil tree and false when
    /// the screen was closed meanwhile.
    func inputOnLane(_ input: ViewInput, view viewID: String, held: HeldRequests) async throws(ScreenError) -> Bool {
        if lastTree == nil { try render() }
        guard let node = lastTree?.firstNode(where: { $0.id == viewID }) else {
            throw ScreenError(.noSuchScreen, screen: id, "screen \(id) has no view \(viewID) (the rendered tree lists its views)")
        }
        guard node.isInteractive else {
            throw ScreenError(.takesNoInput, screen: id, "\(viewID) is a \(node.type); it takes no input")
        }
        return try await handleOnLane(action: input.actionName, payload: input.payload(view: viewID), renderFollows: true, held: held,
                                      describedAs: input.described(on: node))
    }
}
