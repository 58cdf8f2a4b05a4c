public import BerthRuntime

/// Everything one frame shows, gathered from the host and the front end's own state. The
/// renderer turns a scene and a size into a frame and touches nothing else.
public struct Scene: Sendable {
    /// The title bar's text (the visible screen's plugin and route).
    public var title: String
    /// The route of every screen from the launch root to the visible one; a presented
    /// screen starts a new group (`modalStarts` holds the index of each group's first screen).
    public var crumbs: [String]
    /// Indices in `crumbs` of presented screens.
    public var modalStarts: Set<Int> = []
    /// What the header's back affordance does: nil when there is nowhere to go back to.
    public var back: BackAffordance?
    /// The screen under a modal, drawn faint behind it.
    public var backdrop: ScreenContent?
    /// The screen in front (or the start screen's routes when nothing is open).
    public var content: ScreenContent
    /// Whether `content` is presented (drawn as a layer with a frame).
    public var isModal = false
    /// The focused target, drawn reversed.
    public var focus: FocusTarget?
    /// The caret of the text field being edited.
    public var caret: (view: String, offset: Int)?
    /// The first content row shown; `followFocus` moves it so the focused target is seen.
    public var scroll = 0
    /// Whether `scroll` moves to keep the focused target in view.
    public var followFocus = true
    /// A fault to show above the screen (a crashed plugin), until dismissed.
    public var banner: String?
    /// A failed build's problems (`berth dev`), in a panel above the status line until the
    /// next good build: the heading first ("build failed: 2 errors"), then one per line
    /// ("Hello.swift:12:5: error: cannot find 'x' in scope").
    public var problems: [String]?
    /// The bottom line: a message, or the key help.
    public var status: String
    /// The `:` command line while it is open: its text and caret.
    public var commandLine: (text: String, caret: Int)?
    /// The inspector's lines, when it is shown.
    public var inspector: [String]?

    /// What the header's back affordance does.
    public enum BackAffordance: Sendable, Equatable {
        case back, dismiss, close
        var label: String {
            switch self {
            case .back: "‹ Back"
            case .dismiss: "✕ Dismiss"
            case .close: "‹ Close"
            }
        }
    }

    /// A scene with the parts every frame has; the rest default to off.
    public init(title: String, crumbs: [String], content: ScreenContent, status: String) {
        self.title = title
        self.crumbs = crumbs
        self.content = content
        self.status = status
    }
}

/// One screen's part of a scene.
public struct ScreenContent: Sendable {
    /// `com.example.counter/counter · screen 3`.
    public var heading: String
    /// The title the screen's views give (`.title("Inbox")`), shown before the heading.
    public var title: String?
    /// The screen's last rendered tree (nil: it renders no views, or has not rendered).
    public var tree: ViewNode?
    /// Said instead of a tree (`this screen does not render views`).
    public var note: String?
    /// The actions the screen declares, pressed to send.
    public var actions: [DeclaredAction] = []
    /// The routes the start screen offers.
    public var routes: [Route] = []

    /// A screen's part of a scene.
    public init(heading: String, tree: ViewNode? = nil, note: String? = nil, actions: [DeclaredAction] = [], routes: [Route] = []) {
        self.heading = heading
        self.tree = tree
        self.note = note
        self.actions = actions
        self.routes = routes
    }
}
