import BerthRuntime

/// A laid-out piece of a screen: rows of cells (each at most the width it was laid out
/// in) and the targets placed in them, relative to the block's top left.
struct Block {
    var rows: [[Cell]] = []
    var targets: [PlacedTarget] = []

    var width: Int { rows.map(\.count).max() ?? 0 }
    var height: Int { rows.count }

    /// One row of text in one style.
    static func line(_ text: String, style: CellStyle = .plain, width: Int) -> Block {
        Block(rows: [Array(text.prefix(max(width, 0)).map { Cell($0, style: style) })])
    }

    /// `other` below this block.
    mutating func appendBelow(_ other: Block) {
        let offset = rows.count
        rows += other.rows
        targets += other.targets.map { var placed = $0; placed.row += offset; return placed }
    }

    /// `other` to the right of this block, `gap` columns after its widest row.
    mutating func appendBeside(_ other: Block, gap: Int) {
        let offset = rows.isEmpty ? 0 : width + gap
        while rows.count < other.rows.count { rows.append([]) }
        for (index, row) in other.rows.enumerated() {
            rows[index] += Array(repeating: Cell.blank, count: max(offset - rows[index].count, 0)) + row
        }
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

    /// Every row indented by `columns`, with `gutter` drawn in the indent.
    func indented(by columns: Int, gutter: String = "", style: CellStyle = .plain) -> Block {
        let prefix = Array((gutter + String(repeating: " ", count: max(columns - gutter.count, 0))).prefix(columns)).map { Cell($0, style: style) }
        return Block(rows: rows.map { prefix + $0 },
                     targets: targets.map { var placed = $0; placed.column += columns; return placed })
    }
}
