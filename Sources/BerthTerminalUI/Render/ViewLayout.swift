import BerthRuntime

/// Lays a plugin's view tree out as terminal rows: stacks go down, an HStack goes across,
/// every control takes one row. Pure: the same tree, width and focus give the same block.
/// Only the rows in `shown` get cells; a control or a one-row text outside them is a
/// placeholder of the same size with the same targets (a 1,000-row screen makes cells for
/// the rows on the terminal only).
struct ViewLayout {
    let width: Int
    let focus: FocusTarget?
    /// The caret of the text field being edited (its identity and column in its text).
    let caret: (view: String, offset: Int)?
    /// The rows of the block that are drawn (nil: all of them).
    let shown: Range<Int>?
    /// Where the caret landed (row, column in the block), when the focused field was drawn.
    private(set) var caretPosition: (row: Int, column: Int)?

    init(width: Int, focus: FocusTarget?, caret: (view: String, offset: Int)?, shown: Range<Int>? = nil) {
        self.width = width
        self.focus = focus
        self.caret = caret
        self.shown = shown
    }

    /// Whether rows `row..<row + height` of the block are all outside `shown`.
    private func isHidden(row: Int, height: Int = 1) -> Bool {
        guard let shown else { return false }
        return row + height <= shown.lowerBound || row >= shown.upperBound
    }

    /// `shown` as rows of a block that starts at `row`.
    private func shown(from row: Int) -> Range<Int>? {
        shown.map { ($0.lowerBound - row)..<($0.upperBound - row) }
    }

    mutating func layout(_ node: ViewNode) -> Block {
        layout(node, width: width, caretBase: (0, 0))
    }

    /// A node's block, with its style (emphasis and colour over its cells, padding and a
    /// border around them) when it has one.
    private mutating func layout(_ node: ViewNode, width: Int, caretBase: (row: Int, column: Int)) -> Block {
        guard ViewLayout.hasStyle(node) else { return layoutContent(node, width: width, caretBase: caretBase) }
        let style = node.style
        let inset = style.padding + (style.border ? 1 : 0)
        guard width - 2 * inset >= 1 else { return layoutContent(node, width: width, caretBase: caretBase) }
        var block = layoutContent(node, width: width - 2 * inset, caretBase: (caretBase.row + inset, caretBase.column + inset))
        block.restyle(with: style)
        return inset > 0 ? block.framed(padding: style.padding, border: style.border) : block
    }

    /// Whether the node carries a style field (most do not: checked before parsing one).
    private static func hasStyle(_ node: ViewNode) -> Bool {
        let fields = node.fields
        return fields["emphasis"] != nil || fields["foreground"] != nil || fields["padding"] != nil || fields["border"] != nil
    }

    private mutating func layoutContent(_ node: ViewNode, width: Int, caretBase: (row: Int, column: Int)) -> Block {
        let fields = node.fields
        let focused = focus == .view(node.id)
        let style: CellStyle = focused ? .focused : .plain
        switch node.type {
        case "Text":
            let text = fields["text"] ?? ""
            if width > 0, isHidden(row: caretBase.row), !text.contains("\n"), text.count <= width {
                return .placeholder(height: 1, width: text.count)
            }
            return Self.wrapped(text, width: width)
        case "Button":
            return control("[ \(fields["label"] ?? "") ]", node: node, style: style, width: width, row: caretBase.row)
        case "Toggle":
            return control("[\(fields["isOn"] == "true" ? "x" : " ")] \(fields["label"] ?? "")", node: node, style: style, width: width, row: caretBase.row)
        case "Stepper":
            return control("\(fields["label"] ?? ""): [-] \(fields["value"] ?? "?") [+]", node: node, style: style, width: width, row: caretBase.row)
        case "TextField":
            return textField(node, focused: focused, width: width, caretBase: caretBase)
        case "Picker":
            return picker(node, style: style, width: width, row: caretBase.row)
        case "Spacer":
            return Block(rows: [[]])
        case "Divider":
            return Block.line(String(repeating: "─", count: max(width, 0)), style: .faint, width: width)
        case "HStack":
            return hStack(node, width: width, caretBase: caretBase)
        case "List":
            var block = Block()
            let gutter = [Cell("│", style: .faint), Cell(" ", style: .faint)]
            node.children.withUnsafeBufferPointer { children in
                for index in children.indices {
                    let start = caretBase.row + block.height
                    if let hidden = hiddenRow(children[index], width: width - 2, row: start) {
                        block.appendHiddenRow(columns: hidden.columns, view: hidden.focusable ? children[index].id : nil, indent: 2)
                        continue
                    }
                    let childBlock = layout(children[index], width: width - 2, caretBase: (start, caretBase.column + 2))
                    let rows = shown(from: start) ?? 0..<childBlock.height
                    block.appendBelow(childBlock, indent: 2, gutter: gutter, shown: rows)
                }
            }
            return block
        case "VStack", "Group", "ForEach", "if":
            var block = Block()
            // Children borrowed from the buffer, not copied one by one (a 1,000-row list).
            node.children.withUnsafeBufferPointer { children in
                for index in children.indices {
                    let start = caretBase.row + block.height
                    if let hidden = hiddenRow(children[index], width: width, row: start) {
                        block.appendHiddenRow(columns: hidden.columns, view: hidden.focusable ? children[index].id : nil, indent: 0)
                        continue
                    }
                    block.appendBelow(layout(children[index], width: width, caretBase: (start, caretBase.column)))
                }
            }
            return block
        default:
            // A kind this front end does not know yet: named, with its children below.
            var block = Block.line("‹\(node.type)›", style: .faint, width: width)
            for child in node.children {
                block.appendBelow(layout(child, width: width - 2, caretBase: (caretBase.row + block.height, caretBase.column + 2)).indented(by: 2))
            }
            return block
        }
    }

    /// A child of a stack that is one row outside `shown`, measured without a block of its
    /// own: its columns and its target. Nil when it is shown, may take more rows (wrapped
    /// text, padding, a border, a picker's options, children) or is a kind measured in full.
    /// A 1,000-row list is mostly such rows, so this reads each node's fields once, hashing
    /// nothing, and makes no text.
    @inline(__always)
    private func hiddenRow(_ node: ViewNode, width: Int, row: Int) -> HiddenRow? {
        guard width > 0, isHidden(row: row), node.children.isEmpty else { return nil }
        var label = "", text = "", value = "?"
        for (key, field) in node.fields {
            switch key {
            case "label": label = field
            case "text": text = field
            case "value": value = field
            case "padding", "border": return nil
            default: break
            }
        }
        let columns: Int
        switch node.type {
        case "Button": columns = Self.columns(label) + 4
        case "Toggle": columns = Self.columns(label) + 4
        case "Stepper": columns = Self.columns(label) + Self.columns(value) + 10
        case "Text":
            guard !text.contains("\n") else { return nil }
            let count = Self.columns(text)
            guard count <= width else { return nil }
            return HiddenRow(columns: count, focusable: false)
        case "Spacer": return HiddenRow(columns: 0, focusable: false)
        default: return nil
        }
        return HiddenRow(columns: min(columns, width), focusable: true)
    }

    /// What a stack needs of a hidden one-row child: its columns, and whether it is a
    /// control (its identity is the target). Plain values: nothing to retain per row.
    private struct HiddenRow {
        var columns: Int
        var focusable: Bool
    }

    /// The columns `text` takes (one per character): its byte count when it is ASCII with
    /// no carriage return (each byte a character), else its characters counted.
    static func columns(_ text: String) -> Int {
        var text = text
        let ascii = text.withUTF8 { bytes in bytes.allSatisfy { $0 < 0x80 && $0 != 0x0D } }
        return ascii ? text.utf8.count : text.count
    }

    /// Children left to right, one column apart; Spacers share the width left over, a
    /// Divider is one `│`.
    private mutating func hStack(_ node: ViewNode, width: Int, caretBase: (row: Int, column: Int)) -> Block {
        let spacers = node.children.filter { $0.type == "Spacer" }.count
        var spacerWidth = 0
        if spacers > 0 {
            // Measured without spacers first (a copy, so the caret is placed by the real pass).
            var measure = self
            var fixed = Block()
            for child in node.children where child.type != "Spacer" {
                let used = fixed.rows.isEmpty ? 0 : fixed.width + 1
                guard width - used > 0 else { break }
                fixed.appendBeside(measure.hStackChild(child, width: width - used, caretBase: caretBase), gap: fixed.rows.isEmpty ? 0 : 1)
            }
            spacerWidth = max(width - fixed.width - spacers, 0) / spacers
        }
        var block = Block()
        for child in node.children {
            let used = block.rows.isEmpty ? 0 : block.width + 1
            guard width - used > 0 else { break }
            let childBlock = child.type == "Spacer"
                ? Block(rows: [Array(repeating: Cell.blank, count: min(spacerWidth, width - used))])
                : hStackChild(child, width: width - used, caretBase: (caretBase.row, caretBase.column + used))
            block.appendBeside(childBlock, gap: block.rows.isEmpty ? 0 : 1)
        }
        return block
    }

    private mutating func hStackChild(_ child: ViewNode, width: Int, caretBase: (row: Int, column: Int)) -> Block {
        child.type == "Divider" ? Block.line("│", style: .faint, width: width) : layout(child, width: width, caretBase: caretBase)
    }

    /// The label (the focus target), then one row per option, the selected one marked:
    ///
    ///     Show
    ///       ● All
    ///       ○ Starred
    private func picker(_ node: ViewNode, style: CellStyle, width: Int, row: Int) -> Block {
        let label = node.fields["label"].flatMap { $0.isEmpty ? nil : $0 } ?? "Choose"
        var block = control(label, node: node, style: style, width: width, row: row)
        let selected = Int(node.fields["value"] ?? "") ?? -1
        for (index, option) in node.children.enumerated() {
            let chosen = index == selected
            var row = Block.line("  \(chosen ? "●" : "○") \(option.fields["text"] ?? "")", style: chosen ? .strong : .plain, width: width)
            row.targets = [PlacedTarget(target: .option(view: node.id, index: index), row: 0, column: 0, width: row.width)]
            block.appendBelow(row)
        }
        return block
    }

    private func control(_ text: String, node: ViewNode, style: CellStyle, width: Int, row: Int) -> Block {
        if isHidden(row: row) {
            let columns = min(text.count, max(width, 0))
            return .placeholder(height: 1, width: columns, targets: [PlacedTarget(target: .view(node.id), row: 0, column: 0, width: columns)])
        }
        var block = Block.line(text, style: style, width: width)
        block.targets = [PlacedTarget(target: .view(node.id), row: 0, column: 0, width: block.width)]
        return block
    }

    /// `Label: [text      ]`, the box at least 12 columns; the focused field shows its caret.
    private mutating func textField(_ node: ViewNode, focused: Bool, width: Int, caretBase: (row: Int, column: Int)) -> Block {
        let label = node.fields["label"] ?? ""
        let text = Array(node.fields["text"] ?? "")
        let prefix = label.isEmpty ? "" : "\(label): "
        let room = max(width - prefix.count - 2, 1)
        let boxWidth = min(max(text.count + 1, 12), room)
        // Scrolled so the caret stays inside the box.
        let offset = focused ? min(caret.flatMap { $0.view == node.id ? $0.offset : nil } ?? text.count, text.count) : text.count
        let first = max(0, offset - boxWidth + 1)
        let visible = String(text.dropFirst(first).prefix(boxWidth))
        let boxStyle: CellStyle = focused ? .focused : CellStyle(underline: true)
        var row = prefix.map { Cell($0, style: .plain) } + [Cell("[", style: focused ? .focused : .plain)]
        row += (visible + String(repeating: " ", count: boxWidth - visible.count)).map { Cell($0, style: boxStyle) }
        row.append(Cell("]", style: focused ? .focused : .plain))
        row = Array(row.prefix(max(width, 0)))
        if focused {
            caretPosition = (caretBase.row, caretBase.column + prefix.count + 1 + offset - first)
        }
        return Block(rows: [row], targets: [PlacedTarget(target: .view(node.id), row: 0, column: 0, width: row.count)])
    }

    /// Text broken at spaces to fit `width` (a word longer than the width is cut).
    static func wrapped(_ text: String, width: Int, style: CellStyle = .plain) -> Block {
        guard width > 0 else { return Block(rows: [[]]) }
        var rows: [[Cell]] = []
        for paragraph in text.split(separator: "\n", omittingEmptySubsequences: false) {
            var line = ""
            for word in paragraph.split(separator: " ", omittingEmptySubsequences: false) {
                let candidate = line.isEmpty ? String(word) : line + " " + word
                if candidate.count <= width || line.isEmpty {
                    line = candidate
                } else {
                    rows.append(Array(line.prefix(width)).map { Cell($0, style: style) })
                    line = String(word)
                }
                while line.count > width {
                    rows.append(Array(line.prefix(width)).map { Cell($0, style: style) })
                    line = String(line.dropFirst(width))
                }
            }
            rows.append(line.map { Cell($0, style: style) })
        }
        return Block(rows: rows)
    }
}
