/// What changed between two states, as the message a page applies: the top-level parts
/// that changed, the view nodes that changed on screens whose shape stayed (each node
/// replaced with its subtree, so a counter's tick is one `Text`), and the events that are
/// new. A page that applied the previous version is at the new one after it.
struct WebStatePatch: Encodable {
    let kind = "patch"
    var version: Int
    /// The screens, whole, when a screen opened, closed, or changed more than its views.
    var screens: [WebScreen]?
    /// Nodes that changed on screens that stayed, by screen id.
    var nodes: [ScreenNode]?
    var back: String??
    var routes: [String]?
    var plugins: [WebPlugin]?
    var reload: WebReload??
    var banner: WebBanner??
    /// Events after the previous version's last one.
    var events: [WebEvent]?

    struct ScreenNode: Encodable {
        var screen: Int
        var node: WebViewNode
    }

    /// Whether it changes nothing.
    var isEmpty: Bool {
        screens == nil && nodes == nil && back == nil && routes == nil && plugins == nil && reload == nil && banner == nil && events == nil
    }

    /// The patch from `old` to `new`.
    init(from old: WebState, to new: WebState, version: Int) {
        self.version = version
        if old.screens != new.screens {
            if let nodes = Self.nodeChanges(from: old.screens, to: new.screens) {
                self.nodes = nodes
            } else {
                screens = new.screens
            }
        }
        if old.back != new.back { back = .some(new.back) }
        if old.routes != new.routes { routes = new.routes }
        if old.plugins != new.plugins { plugins = new.plugins }
        if old.reload != new.reload { reload = .some(new.reload) }
        if old.banner != new.banner { banner = .some(new.banner) }
        let lastSequence = old.events.last?.sequence ?? 0
        let added = new.events.filter { $0.sequence > lastSequence }
        if !added.isEmpty { events = added }
    }

    /// The changed nodes when the same screens are open with only their views changed;
    /// nil when the screens themselves changed (or a tree's root did).
    static func nodeChanges(from old: [WebScreen], to new: [WebScreen]) -> [ScreenNode]? {
        guard old.count == new.count else { return nil }
        var changes: [ScreenNode] = []
        for (before, after) in zip(old, new) {
            var bare = before
            bare.tree = after.tree
            guard bare == after else { return nil }
            switch (before.tree, after.tree) {
            case (nil, nil): continue
            case (let previous?, let next?):
                guard let nodes = nodeChanges(from: previous, to: next) else { return nil }
                changes += nodes.map { ScreenNode(screen: after.id, node: $0) }
            default: return nil
            }
        }
        return changes
    }

    /// The nodes to replace (each with its subtree) to turn `old` into `new`; nil when the
    /// root itself is another view.
    static func nodeChanges(from old: WebViewNode, to new: WebViewNode) -> [WebViewNode]? {
        guard old.type == new.type, old.id == new.id else { return nil }
        let sameChildren = old.children.count == new.children.count
            && zip(old.children, new.children).allSatisfy { $0.id == $1.id && $0.type == $1.type }
        guard old.fields == new.fields, sameChildren else { return [new] }
        return zip(old.children, new.children).flatMap { nodeChanges(from: $0, to: $1) ?? [$1] }
    }
}

/// The whole state, for a page that connects or reconnects.
struct WebStateMessage: Encodable {
    let kind = "state"
    var version: Int
    var state: WebState
}

/// The end of one of a page's requests: its error, if any, after the patch it caused.
struct WebDoneMessage: Encodable {
    let kind = "done"
    var request: Int?
    var error: String?
}
