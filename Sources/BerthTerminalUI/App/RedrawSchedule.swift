/// When the front end lays out a frame. Host changes and the front end's own requests
/// coalesce into one pending frame; a change made by the front end's own operation asks for
/// none (the frame after the input is drawn anyway); and with no host change since the last
/// frame and the same `FrameKey`, the next frame would be the same, so it is not laid out.
struct RedrawSchedule {
    /// Whether a frame was asked for and not drawn yet.
    private(set) var isPending = false
    /// Frames laid out so far (an unchanged one is skipped before layout).
    private(set) var framesLaidOut = 0
    /// Set while the front end itself calls the host.
    var operating = false
    /// Whether the host reported a change (any outermost operation ended, the front end's
    /// own included) since the last frame was laid out.
    private var hostChanged = true
    /// The front end's own part of the last frame laid out.
    private var drawnKey: FrameKey?

    /// The host reported a change; true when a frame should be asked for.
    mutating func noteHostChange() -> Bool {
        hostChanged = true
        return !operating
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

    /// Whether the frame for `key` is to be laid out: not when nothing changed since the
    /// last one and the terminal still shows it, unless `always` (an inspector whose figures
    /// move on their own).
    mutating func shouldLayOut(_ key: FrameKey, terminalShowsLast: Bool, always: Bool) -> Bool {
        if !hostChanged, terminalShowsLast, !always, key == drawnKey { return false }
        framesLaidOut += 1
        return true
    }

    /// The frame laid out showed the host as it is now, and the front end's `key`.
    mutating func laidOut(_ key: FrameKey) {
        hostChanged = false
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
