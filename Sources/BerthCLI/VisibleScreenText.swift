@_spi(Engine) import BerthRuntime

/// The visible screen rendered as text, for showing a screen again after its plugin was
/// reloaded (by `reload`, by `--watch`, or by `berth dev`).
@MainActor
enum VisibleScreenText {
    /// The visible screen as `screen` prints it, when it belongs to `pluginID` and renders
    /// views; nil otherwise (nothing of that plugin is on show).
    static func after(reloadOf pluginID: String, in host: BerthHost) -> String? {
        guard let router = host.visibleRouter, router.pluginID == pluginID,
              router.module?.canRender == true
        else { return nil }
        let header = "screen \(router.id) \(router.pluginID)/\(router.route)"
        do {
            return ViewTreeText.render(try host.render()?.root, header: header).text
        } catch {
            return "\(header)\n  (render failed: \(error))"
        }
    }
}
