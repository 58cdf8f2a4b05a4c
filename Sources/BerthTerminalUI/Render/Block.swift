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

    /// Every row indented by `columns`, with `gutter` drawn in the indent.
    func indented(by columns: Int, gutter: String = "", style: CellStyle = .plain) -> Block {
        let prefix = Array((gutter + String(repeating: " ", count: max(columns - gutter.count, 0))).prefix(columns)).map { Cell($0, style: style) }
        return Block(rows: rows.map { prefix + $0 },
                     targets: targets.map { var placed = $0; placed.column += columns; return placed })
    }
}
