/// The terminal's side of drawing: the frame it shows, and the bytes that turn it into the
/// next one (only what changed; nothing when nothing did).
struct TerminalOutput {
    /// Turns one frame into the next.
    var writer: FrameWriter
    private var onScreen: (frame: Frame, cursor: FrameWriter.Cursor?)?
    /// Frames written so far (a frame with no change writes nothing and is not counted).
    private(set) var framesWritten = 0

    /// Output whose first frame is drawn whole.
    init(colours: Bool) {
        writer = FrameWriter(colours: colours)
    }

    /// Whether the terminal shows the last frame written (it was not forgotten since).
    var showsLastFrame: Bool { onScreen != nil }

    /// Forgets what is on the terminal, so the next frame is written whole.
    mutating func forget() {
        onScreen = nil
    }

    /// The bytes that turn the terminal's frame into `frame` (empty when nothing changed);
    /// from then on the terminal is taken to show `frame`.
    mutating func update(to frame: RenderedFrame) -> [UInt8] {
        let bytes = writer.update(from: onScreen?.frame, cursor: onScreen?.cursor, to: frame.frame, cursor: frame.cursor)
        onScreen = (frame.frame, frame.cursor)
        if !bytes.isEmpty { framesWritten += 1 }
        return bytes
    }
}
