@_spi(Engine) import BerthRuntime

/// The visible screen rendered as text, for showing a screen again after its plugin was
/// reloaded (by `reload`, by `--watch`, or by `berth dev`).
@MainActor
enum VisibleScreenText {
    /// The visible screen as `screen` prints it, when it belongs to `pluginID` and renders
    /// views; nil otherwise (nothing of that plugin is on show).
    static func after(reloadOf pluginID: String, in host: BerthHost) async -> String? {
        guard let router = host.visibleRouter, router.pluginID == pluginID,
              router.module?.canRender == true
        else { return nil }
        let header = "screen \(router.id) \(router.pluginID)/\(router.route)"
        do {
            return ViewTreeText.render(try await visibleTree(in: host), header: header).text
        } catch {
            return "\(header)\n  (render failed: \(error))"
        }
    }

    /// The visible screen's tree, rendered on its plugin's lane: the host goes on meanwhile.
    /// While the plugin is busy (a task's post), its last tree; a shell never waits for it.
    static func visibleTree(in host: BerthHost) async throws(ScreenError) -> ViewNode? {
        do {
            return try await host.renderOnLane()?.root
        } catch where error.code == .busy {
            guard let tree = host.visibleRouter?.module?.lastTree else { throw error }
            return tree.root
        }
    }
}
