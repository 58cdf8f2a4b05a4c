/// What the page shows, as plain values: the screens from the launch root to the visible
/// one, the routes to start from, the plugins for the inspector, the last reload, the
/// banner and the event log. `WebHostAdapter` makes it from the host; `WebStateDiff` turns
/// two of them into the patch a page applies. Nothing here refers to the host's objects.
public struct WebState: Codable, Sendable, Equatable {
    /// The open screens, the launch stack's root first, the visible one last.
    public var screens: [WebScreen] = []
    /// What the page's back control does: `back`, `dismiss`, `close`, or nil (nothing open).
    public var back: String?
    /// Every route that can be opened (`PLUGIN/ROUTE`), for the start list.
    public var routes: [String] = []
    /// The plugins, by id.
    public var plugins: [WebPlugin] = []
    /// The last reload's phases, for the inspector.
    public var reload: WebReload?
    /// A crash or a startup problem, shown over the screen until dismissed.
    public var banner: WebBanner?
    /// The newest events, oldest first (at most `WebState.eventLimit`).
    public var events: [WebEvent] = []

    /// How many events a page keeps.
    public static let eventLimit = 200

    /// An empty state (nothing open, no plugin).
    public init() {}
}

/// One open screen.
public struct WebScreen: Codable, Sendable, Equatable {
    /// The screen's router id (what input and actions name).
    public var id: Int
    /// `PLUGIN/ROUTE`.
    public var route: String
    /// The plugin's id.
    public var plugin: String
    /// The title its tree declares (`.title(…)`), if any.
    public var title: String?
    /// Whether it was presented (it starts a modal layer over the screen before it).
    public var presented: Bool
    /// Its lifecycle state (`active`, `inactive` …).
    public var state: String
    /// Whether its plugin is busy (a call to it has not returned yet).
    public var busy: Bool
    /// The last view tree it rendered; nil when it renders none (yet).
    public var tree: WebViewNode?
    /// The actions its manifest declares.
    public var actions: [WebAction]
}

/// One node of a view tree: its type (`Button`, `VStack` …), identity, fields
/// (`text`, `label`, `isOn`, `value`, `emphasis`, `foreground`, `padding`, `border`, `title`)
/// and children.
public struct WebViewNode: Codable, Sendable, Equatable {
    /// `VStack`, `Text`, `Button` …
    public var type: String
    /// The view's identity below its screen.
    public var id: String
    /// Its fields, as text.
    public var fields: [String: String]
    /// Its children, in order.
    public var children: [WebViewNode]

    /// A node with the given parts.
    public init(type: String, id: String, fields: [String: String], children: [WebViewNode]) {
        self.type = type
        self.id = id
        self.fields = fields
        self.children = children
    }
}

/// An action a screen declares.
public struct WebAction: Codable, Sendable, Equatable {
    /// Its name (what `send` takes).
    public var name: String
    /// What it does, in words; `TEXT` in it means it takes text.
    public var summary: String?
}

/// A plugin as the inspector shows it.
public struct WebPlugin: Codable, Sendable, Equatable {
    /// Its id.
    public var id: String
    /// Its manifest's version.
    public var version: String
    /// `loaded`, `failed` …
    public var state: String
    /// The running generation's number.
    public var generation: Int?
    /// Where it runs: `process` (a worker) or `in-process`.
    public var runs: String?
    /// The worker's pid.
    public var pid: Int32?
    /// The worker's resident memory in bytes.
    public var memory: Int?
    /// The memory it may take in bytes (nil: no limit).
    public var memoryLimit: UInt64?
    /// Processor time so far, in milliseconds.
    public var cpuMilliseconds: Int?
    /// Crashes within the crash window, for a plugin in a worker.
    public var crashes: Int?
    /// How many crashes in the window mark it failed.
    public var crashLimit: Int?
    /// The crash window in seconds.
    public var crashWindowSeconds: Int?
}

/// A reload's phases.
public struct WebReload: Codable, Sendable, Equatable {
    /// The plugin reloaded.
    public var plugin: String
    /// Its event's line.
    public var message: String
    /// Each phase that ran, with its milliseconds.
    public var phases: [WebPhase]
}

/// One reload phase.
public struct WebPhase: Codable, Sendable, Equatable {
    /// Its name (`validate`, `reopen` …).
    public var name: String
    /// How long it took, in milliseconds.
    public var milliseconds: Double
}

/// The banner over the screen: a crash, or a plugin that did not load at the start.
public struct WebBanner: Codable, Sendable, Equatable {
    /// The event's sequence number (dismissing names it).
    public var sequence: Int
    /// What it says.
    public var text: String
}

/// One line of the host's event log.
public struct WebEvent: Codable, Sendable, Equatable {
    /// Its position in the log, from 1.
    public var sequence: Int
    /// `loaded`, `crashed` …
    public var kind: String
    /// Who it is about.
    public var subject: String
    /// What happened.
    public var message: String
}
