/// View input: what `BerthHost.input` delivers to a screen.
extension ModuleInstance {
    /// Delivers `kind` input to the view at `viewID` (an identity path from the last render,
    /// rendering first when there is none) as the `berth.<kind>` action with the payload
    /// `view id, NUL, value`, then renders again so the tree and the state are current.
    func input(_ kind: BerthHost.ViewInputKind, view viewID: String, value: String) throws(ScreenError) -> ViewTree? {
        if lastTree == nil { try render() }
        guard let node = lastTree?.firstNode(where: { $0.id == viewID }) else {
            throw ScreenError(.noSuchScreen, screen: id, "screen \(id) has no view \(viewID) (the rendered tree lists its views)")
        }
        guard node.isInteractive else {
            throw ScreenError(.takesNoInput, screen: id, "\(viewID) is a \(node.type); it takes no input")
        }
        let payload = Array(viewID.utf8) + [0] + Array(value.utf8)
        try handle(action: "berth.\(kind.rawValue)", payload: payload)
        return try render()
    }
}
