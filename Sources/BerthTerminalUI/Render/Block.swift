import BerthRuntime

/// A laid-out piece of a screen: rows of cells (each at most the width it was laid out
/// in) and the targets placed in them, relative to the block's top left. A row outside the
/// viewport may be left empty (a placeholder): its height, width and targets still count,
/// so focus order and scrolling see the whole screen while only the visible rows hold cells.
struct Block {
    var rows: [[Cell]] = []
    var targets: [PlacedTarget] = []
    /// Columns: the widest row, or what placeholder rows stand for.
    private(set) var width = 0

    var height: Int { rows.count }

    init(rows: [[Cell]] = [], targets: [PlacedTarget] = []) {
        self.rows = rows
        self.targets = targets
        for row in rows where row.count > width { width = row.count }
    }

    /// `height` empty rows standing for `width` columns of cells nobody will see.
    static func placeholder(height: Int, width: Int, targets: [PlacedTarget] = []) -> Block {
        var block = Block(rows: Array(repeating: [], count: height), targets: targets)
        block.width = width
        return block
    }

    /// One row of text in one style.
    static func line(_ text: String, style: CellStyle = .plain, width: Int) -> Block {
        Block(rows: [Array(text.prefix(max(width, 0)).map { Cell($0, style: style) })])
    }

    /// `other` below this block, indented by `columns` with `gutter` in the indent on the
    /// rows of `other` in `shown` (its own row numbers; the others stay placeholders).
    mutating func appendBelow(_ other: consuming Block, indent columns: Int, gutter: [Cell], shown: Range<Int>) {
        guard !rows.isEmpty || !targets.isEmpty || width > other.width + columns else {
            // The first child of a list: shifted in place, not copied target by target.
            self = consume other
            for index in shown.clamped(to: 0..<rows.count) { rows[index] = gutter + rows[index] }
            for index in targets.indices { targets[index].column += columns }
            width += columns
            return
        }
        let offset = rows.count
        rows += other.rows
        for index in shown.clamped(to: 0..<other.rows.count) { rows[offset + index] = gutter + rows[offset + index] }
        width = max(width, other.width + columns)
        targets.reserveCapacity(targets.count + other.targets.count)
        for var placed in other.targets {
            placed.row += offset
            placed.column += columns
            targets.append(placed)
        }
    }

    /// A placeholder row below this block standing for `columns` cells after `indent`
    /// columns, with the control `view` (if any) over them: a row outside the viewport,
    /// added with no block of its own.
    mutating func appendHiddenRow(columns: Int, view: String?, indent: Int) {
        if let view { targets.append(PlacedTarget(target: .view(view), row: rows.count, column: indent, width: columns)) }
        rows.append([])
        width = max(width, columns + indent)
    }

    /// `other` below this block.
    mutating func appendBelow(_ other: Block) {
        guard !rows.isEmpty || !targets.isEmpty || width > other.width else {
            self = other
            return
        }
        let offset = rows.count
        rows += other.rows
        width = max(width, other.width)
        targets += other.targets.map { var placed = $0; placed.row += offset; return placed }
    }

    /// `other` to the right of this block, `gap` columns after its widest row.
    mutating func appendBeside(_ other: Block, gap: Int) {
        let offset = rows.isEmpty ? 0 : width + gap
        while rows.count < other.rows.count { rows.append([]) }
        // An empty row adds nothing (a placeholder's stays empty: no blanks made for it).
        for (index, row) in other.rows.enumerated() where !row.isEmpty {
            rows[index] += Array(repeating: Cell.blank, count: max(offset - rows[index].count, 0)) + row
        }
        width = max(width, offset + other.width)
        targets += other.targets.map { var placed = $0; placed.column += offset; return placed }
    }

    /// A view's emphasis and colour over every cell (a colour of the cell's own wins).
    mutating func restyle(with style: ViewStyle) {
        let colour = style.foreground.flatMap(CellStyle.Colour.init(name:))
        for row in rows.indices {
            for column in rows[row].indices {
                var cellStyle = rows[row][column].style
                cellStyle.bold = cellStyle.bold || style.bold
                cellStyle.italic = cellStyle.italic || style.italic
                cellStyle.underline = cellStyle.underline || style.underline
                cellStyle.dim = cellStyle.dim || style.dim
                cellStyle.colour = cellStyle.colour ?? colour
                rows[row][column].style = cellStyle
            }
        }
    }

    /// The block inside `padding` blank cells on every side and, with `border`, a box.
    func framed(padding: Int, border: Bool) -> Block {
        let inner = width + 2 * padding
        let edge = border ? [Cell("│", style: .plain)] : []
        let blankRow = edge + Array(repeating: Cell.blank, count: inner) + edge
        var framed: [[Cell]] = []
        if border { framed.append(Array("┌" + String(repeating: "─", count: inner) + "┐").map { Cell($0, style: .plain) }) }
        framed += Array(repeating: blankRow, count: padding)
        let margin = Array(repeating: Cell.blank, count: padding)
        for row in rows {
            framed.append(edge + margin + row + Array(repeating: Cell.blank, count: width - row.count) + margin + edge)
        }
        framed += Array(repeating: blankRow, count: padding)
        if border { framed.append(Array("└" + String(repeating: "─", count: inner) + "┘").map { Cell($0, style: .plain) }) }
        let inset = padding + (border ? 1 : 0)
        return Block(rows: framed, targets: targets.map { var placed = $0; placed.row += inset; placed.column += inset; return placed })
    }

    /// Every row indented by `columns`, with `gutter` drawn in the indent; only the rows in
    /// `shown` (nil: all) are given cells.
    func indented(by columns: Int, gutter: String = "", style: CellStyle = .plain, shown: Range<Int>? = nil) -> Block {
        let prefix = Array((gutter + String(repeating: " ", count: max(columns - gutter.count, 0))).prefix(columns)).map { Cell($0, style: style) }
        var rows = rows
        for index in (shown ?? 0..<rows.count).clamped(to: 0..<rows.count) { rows[index] = prefix + rows[index] }
        var block = Block(rows: rows, targets: targets.map { var placed = $0; placed.column += columns; return placed })
        block.width = width + columns
        return block
    }
}
