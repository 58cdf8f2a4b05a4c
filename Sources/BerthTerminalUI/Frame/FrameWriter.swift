/// Turns one frame into the next on a terminal: the bytes for the cells that changed and
/// nothing else, as one buffer for one `write()`. Nothing changed (cells and cursor): no
/// bytes at all. With `synchronized`, the update is wrapped in DEC mode 2026 (the terminal
/// shows it whole, never half drawn).
public struct FrameWriter: Sendable {
    /// Whether the terminal takes colour (off with `NO_COLOR` or `TERM=dumb`).
    public var colours: Bool
    /// Whether the terminal said it supports synchronized output (DECRQM for mode 2026).
    public var synchronized: Bool

    /// A writer for a terminal that takes colour or not, and synchronized output or not.
    public init(colours: Bool, synchronized: Bool = false) {
        self.colours = colours
        self.synchronized = synchronized
    }

    /// Where the terminal's cursor goes after the frame: shown at a text field's caret,
    /// hidden otherwise.
    public struct Cursor: Equatable, Sendable {
        /// The column (0-based).
        public var column: Int
        /// The row (0-based).
        public var row: Int
        /// A cursor at a cell (0-based).
        public init(column: Int, row: Int) {
            self.column = column
            self.row = row
        }
    }

    /// The bytes that turn `old` (nil: an unknown screen) into `new`; empty when the two
    /// are the same and the cursor stays. A size change or an unknown screen redraws all.
    public func update(from old: Frame?, cursor oldCursor: Cursor?, to new: Frame, cursor: Cursor?) -> [UInt8] {
        var out = TerminalBytes()
        let full = old == nil || old?.width != new.width || old?.height != new.height
        if !full, old == new, oldCursor == cursor { return [] }
        if synchronized { out.append("\u{1B}[?2026h") }
        out.append("\u{1B}[?25l")
        var pen: CellStyle?
        if full { out.append("\u{1B}[0m\u{1B}[2J") ; pen = .plain }
        for row in 0..<new.height {
            var column = 0
            while column < new.width {
                let cell = new[column, row]
                if !full, let old, old[column, row] == cell {
                    column += 1
                    continue
                }
                if full, cell == .blank, pen == .plain {
                    column += 1
                    continue
                }
                // A run of changed cells, written after one cursor move.
                out.append("\u{1B}[\(row + 1);\(column + 1)H")
                while column < new.width {
                    let cell = new[column, row]
                    if !full, let old, old[column, row] == cell { break }
                    if full, cell == .blank, pen == .plain { break }
                    if pen != cell.style {
                        out.append("\u{1B}[\(cell.style.sgrParameters(colours: colours))m")
                        pen = cell.style
                    }
                    out.append(String(cell.character))
                    column += 1
                }
            }
        }
        if pen != .plain { out.append("\u{1B}[0m") }
        if let cursor {
            out.append("\u{1B}[\(cursor.row + 1);\(cursor.column + 1)H\u{1B}[?25h")
        }
        if synchronized { out.append("\u{1B}[?2026l") }
        return out.bytes
    }
}

/// A byte buffer built from text pieces.
struct TerminalBytes {
    private(set) var bytes: [UInt8] = []

    init() {
        bytes.reserveCapacity(4096)
    }

    mutating func append(_ text: String) {
        bytes.append(contentsOf: text.utf8)
    }
}
