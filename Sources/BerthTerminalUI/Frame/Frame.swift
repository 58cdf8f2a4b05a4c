/// One cell of a frame: a character (one column) and its style.
public struct Cell: Hashable, Sendable {
    /// What the cell shows.
    public var character: Character
    /// How it is drawn.
    public var style: CellStyle

    /// A cell showing `character` in `style`.
    public init(_ character: Character = " ", style: CellStyle = .plain) {
        self.character = character
        self.style = style
    }

    /// A plain space.
    public static let blank = Cell()
}

/// A screenful of cells, `width` × `height`, row by row. A renderer fills one; the writer
/// compares it with the frame on screen and sends only what differs. Every character takes
/// one column (wide characters are not measured: the example screens use none).
public struct Frame: Equatable, Sendable {
    /// Columns.
    public let width: Int
    /// Rows.
    public let height: Int
    /// Every cell, row by row.
    public private(set) var cells: [Cell]

    /// A blank frame of `width` × `height`.
    public init(width: Int, height: Int) {
        self.width = max(width, 0)
        self.height = max(height, 0)
        cells = Array(repeating: .blank, count: self.width * self.height)
    }

    /// The cell at (`column`, `row`); writes outside the frame are dropped.
    public subscript(column: Int, row: Int) -> Cell {
        get { cells[row * width + column] }
        set {
            guard column >= 0, column < width, row >= 0, row < height else { return }
            cells[row * width + column] = newValue
        }
    }

    /// Writes `text` from (`column`, `row`) in `style`, clipped at the frame's right edge
    /// and at `limit` columns; returns the column after the last character written.
    @discardableResult
    public mutating func put(_ text: String, column: Int, row: Int, style: CellStyle = .plain, limit: Int? = nil) -> Int {
        guard row >= 0, row < height else { return column }
        let end = min(width, limit.map { column + $0 } ?? width)
        var position = column
        for character in text where position < end {
            if position >= 0 { cells[row * width + position] = Cell(Self.printable(character), style: style) }
            position += 1
        }
        return position
    }

    /// Sets the style of `count` cells from (`column`, `row`), keeping their characters.
    public mutating func restyle(column: Int, row: Int, count: Int, _ change: (inout CellStyle) -> Void) {
        guard row >= 0, row < height else { return }
        for position in max(column, 0)..<min(column + count, width) where position < width {
            change(&cells[row * width + position].style)
        }
    }

    /// Fills a rectangle with blanks in `style`.
    public mutating func clear(column: Int, row: Int, width columns: Int, height rows: Int, style: CellStyle = .plain) {
        for line in max(row, 0)..<min(row + rows, height) {
            for position in max(column, 0)..<min(column + columns, width) {
                cells[line * width + position] = Cell(" ", style: style)
            }
        }
    }

    /// The frame as text, one line per row, trailing blanks dropped (what a golden frame stores).
    public var text: String {
        rows.map { row in
            var line = String(row.map(\.character))
            while line.last == " " { line.removeLast() }
            return line
        }.joined(separator: "\n")
    }

    /// The styles as text, one letter per cell (`CellStyle.maskLetter`), trailing blanks dropped.
    public var styleMask: String {
        rows.map { row in
            var line = String(row.map(\.style.maskLetter))
            while line.last == " " { line.removeLast() }
            return line
        }.joined(separator: "\n")
    }

    /// The text of one row (trailing blanks kept).
    public func line(_ row: Int) -> String {
        String(cells[row * width..<(row + 1) * width].map(\.character))
    }

    private var rows: [ArraySlice<Cell>] {
        (0..<height).map { cells[$0 * width..<($0 + 1) * width] }
    }

    /// Control characters from a plugin's text are shown, not sent to the terminal.
    private static func printable(_ character: Character) -> Character {
        guard let scalar = character.unicodeScalars.first, character.unicodeScalars.count == 1 else { return character }
        if scalar.value < 0x20 || scalar.value == 0x7F || (0x80..<0xA0).contains(scalar.value) { return "�" }
        return character
    }
}
