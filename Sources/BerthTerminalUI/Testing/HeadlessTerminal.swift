public import BerthRuntime

/// The front end without a terminal, for tests (a Pilot, in Textual's words): press keys,
/// type, click, scroll, resize, and read the frame as text and as a style mask. The frame
/// is the one the front end last wrote; `bytesWritten` is what it sent for it.
@MainActor
public final class HeadlessTerminal: TerminalScreen {
    /// The terminal's columns and rows (set by `resize`).
    public private(set) var size: (width: Int, height: Int)
    /// Every write, in order (one per frame that changed something).
    public private(set) var writes: [[UInt8]] = []
    /// The front end being driven.
    public private(set) var app: TerminalApp!

    /// A front end over `host` on a headless terminal of `width` × `height`, first frame drawn.
    public init(host: BerthHost, width: Int = 80, height: Int = 24, commands: TerminalCommands? = nil) {
        size = (width, height)
        app = TerminalApp(host: host, screen: self, commands: commands)
        app.draw()
    }

    /// Records one frame's bytes.
    public func write(_ bytes: [UInt8]) {
        writes.append(bytes)
    }

    /// The frame on the (headless) terminal now.
    public var frame: Frame { app.rendered?.frame ?? Frame(width: size.width, height: size.height) }
    /// The frame's text (trailing blanks dropped).
    public var text: String { frame.text }
    /// The frame and its style mask, as golden files store them.
    public var golden: String { frame.text + "\n--- styles\n" + frame.styleMask + "\n" }

    /// Presses one key and draws the frame it leads to (once what it started on a plugin's
    /// lane has returned).
    public func press(_ key: Key) async {
        await handle(.key(key))
    }

    /// Types each character of `text` as a key.
    public func type(_ text: String) async {
        for character in text { await handle(.key(.character(character))) }
    }

    /// Pastes `text` (bracketed paste: never taken as keys).
    public func paste(_ text: String) async {
        await handle(.paste(text))
    }

    /// A click at a cell (0-based).
    public func click(column: Int, row: Int) async {
        await handle(.mouse(MouseEvent(.press, column: column, row: row)))
        await handle(.mouse(MouseEvent(.release, column: column, row: row)))
    }

    /// One event, its lane work returned, and the frame it leads to.
    private func handle(_ event: InputEvent) async {
        await app.handle(event)
        await app.laneOperationsReturned()
        settle()
    }

    /// A click on the first cell showing `text` (nil when it is not on the frame).
    @discardableResult
    public func click(on text: String) async -> Bool {
        for row in 0..<frame.height {
            if let range = frame.line(row).range(of: text) {
                await click(column: frame.line(row).distance(from: frame.line(row).startIndex, to: range.lowerBound), row: row)
                return true
            }
        }
        return false
    }

    /// Turns the mouse wheel one notch over a cell.
    public func wheel(down: Bool, column: Int = 1, row: Int = 3) async {
        await app.handle(.mouse(MouseEvent(down ? .wheelDown : .wheelUp, column: column, row: row)))
    }

    /// Resizes the terminal and redraws the whole frame.
    public func resize(width: Int, height: Int) {
        size = (width, height)
        app.invalidate()
        app.draw()
    }

    /// Draws what the host changed since the last frame (what the run loop does when an
    /// element of `host.changes` wakes it; here at once, by the host's `changeCount`, without
    /// waiting for the element); false when nothing asked for a frame.
    @discardableResult
    public func settle() -> Bool {
        guard app.redrawPending else { return false }
        app.draw()
        return true
    }

    /// Lets the main actor run (a managed task's post, a worker's message) until the frame
    /// shows `text` or `timeout` passes; true when it does.
    public func waitFor(_ text: String, timeout: Duration = .seconds(10)) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            settle()
            if self.text.contains(text) { return true }
            try? await Task.sleep(for: .milliseconds(5))
        }
        settle()
        return self.text.contains(text)
    }
}
