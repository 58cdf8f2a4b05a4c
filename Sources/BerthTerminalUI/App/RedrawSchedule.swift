/// When the front end lays out a frame. Host changes and the front end's own requests
/// coalesce into one pending frame; a frame remembers the host's `changeCount` it showed,
/// so a `.changed` element read after that frame (the front end's own operation, drawn at
/// once) asks for none; and with the host unchanged since the last frame and the same
/// `FrameKey`, the next frame would be the same, so it is not laid out.
struct RedrawSchedule {
    /// Whether a frame was asked for and not drawn yet.
    private(set) var isPending = false
    /// Frames laid out so far (an unchanged one is skipped before layout).
    private(set) var framesLaidOut = 0
    /// The host's `changeCount` when the last frame was laid out (nil before the first).
    private var drawnChange: Int?
    /// The front end's own part of the last frame laid out.
    private var drawnKey: FrameKey?

    /// Whether the last frame laid out showed the host before its change number `change`.
    func showsOlder(than change: Int) -> Bool {
        drawnChange != change
    }

    /// Asks for a frame; true when none was pending yet (the loop is to be woken).
    mutating func request() -> Bool {
        guard !isPending else { return false }
        isPending = true
        return true
    }

    /// A frame is being drawn: what is asked from now on asks for the next one.
    mutating func startDrawing() {
        isPending = false
    }

    /// Whether the frame for `key` of the host at `hostChange` is to be laid out: not when
    /// the last one showed the same, and the terminal still shows it, unless `always` (an
    /// inspector whose figures move on their own).
    mutating func shouldLayOut(_ key: FrameKey, hostChange: Int, terminalShowsLast: Bool, always: Bool) -> Bool {
        if drawnChange == hostChange, terminalShowsLast, !always, key == drawnKey { return false }
        framesLaidOut += 1
        return true
    }

    /// The frame laid out showed the host at `hostChange`, and the front end's `key`.
    mutating func laidOut(_ key: FrameKey, hostChange: Int) {
        drawnChange = hostChange
        drawnKey = key
    }
}

/// What a frame shows besides the host's state: the terminal's size, the screen in front,
/// and the front end's focus, scroll, carets, banner, status, command line and whether the
/// inspector is open.
struct FrameKey: Equatable {
    var width: Int
    var height: Int
    var screen: Int
    var focus: FocusTarget?
    var scroll: Int?
    var followFocus: Bool
    var carets: [String: Int]?
    var banner: String?
    var message: String?
    var commandLine: String?
    var commandCaret: Int?
    var inspector: Bool
    var problems: [String]?
    /// The visible screen's plugin is in a call on its lane (the busy mark shows).
    var busy = false

    /// The key of `screen` on a terminal of `size`, with the front end's own state.
    init(size: (width: Int, height: Int), screen: Int, places: ScreenPlaces, banner: String?, message: String?,
         commandLine: CommandLineEntry?, inspector: Bool, problems: [String]? = nil, busy: Bool = false) {
        (width, height, self.screen) = (size.width, size.height, screen)
        (focus, scroll, followFocus, carets) = (places.focus[screen], places.scroll[screen], places.followFocus, places.carets[screen])
        (self.banner, self.message, self.inspector, self.busy) = (banner, message, inspector, busy)
        (self.commandLine, commandCaret) = (commandLine?.text, commandLine?.caret)
        self.problems = problems
    }
}
