@_spi(Engine) import BerthRuntime

/// The router tree as text: each screen with its plugin, generation, state and live
/// managed tasks; modal flows marked `presented`, the visible screen marked `◀ visible`.
@MainActor
enum RouterTreeText {
    static func render(_ host: BerthHost) -> String {
        var lines = ["launch"]
        let visible = host.visibleRouter
        func visit(_ router: Router, prefix: String, isLast: Bool) {
            let branch = isLast ? "└─ " : "├─ "
            var text = "\(router.id) \(router.pluginID)/\(router.route)"
            if let parent = router.parent, parent.kind == .screen, router.isPresented(from: parent) {
                text = "presented " + text
            }
            if let module = router.module {
                // As its snapshot says: a screen `open` has not pushed yet is `opening`.
                let state = host.isOpening(router) ? ScreenState.opening : module.state
                text += "  gen \(module.generation.number)  \(state)  tasks \(router.interactor?.liveTaskCount ?? 0)"
            }
            if router === visible { text += "  ◀ visible" }
            lines.append(prefix + branch + text)
            let childPrefix = prefix + (isLast ? "   " : "│  ")
            for (index, child) in router.children.enumerated() {
                visit(child, prefix: childPrefix, isLast: index == router.children.count - 1)
            }
        }
        for (index, child) in host.launchRouter.children.enumerated() {
            visit(child, prefix: "", isLast: index == host.launchRouter.children.count - 1)
        }
        return lines.joined(separator: "\n")
    }
}
