/// A drawn scene: the frame, where each target landed (for clicks), the focus order, the
/// cursor, and the scroll the frame used.
public struct RenderedFrame: Sendable {
    /// The cells.
    public var frame: Frame
    /// Where each clickable target landed, in drawing order.
    public var targets: [PlacedTarget]
    /// The focusable targets of the front screen, in render order (Tab's order).
    public var focusOrder: [FocusTarget]
    /// Where the terminal's cursor goes (a text field's caret), if shown.
    public var cursor: FrameWriter.Cursor?
    /// The first content row shown (after following focus).
    public var scroll: Int
    /// Rows of the front screen's content and how many of them fit.
    public var contentHeight: Int
    /// How many content rows fit on the terminal.
    public var viewportHeight: Int

    /// The target under a click, if any.
    public func target(column: Int, row: Int) -> FocusTarget? {
        targets.last { $0.contains(column: column, row: row) }?.target
    }
}

/// The pure function from a scene and a size to a frame.
///
///     row 0      title bar                       F2 inspector · : command · ^C quit
///     row 1      ‹ Back   counter › inbox ⧉ compose
///     (row 2     a banner, when a plugin crashed)
///     rows …     the screen (a presented one boxed over its faint presenter), scrolled
///     (rows …    a failed build's problems, up to half the rows left)
///     last row   status, or the `:` command line
public enum Renderer {
    /// Draws `scene` on a `width` × `height` frame.
    public static func render(_ scene: Scene, width: Int, height: Int) -> RenderedFrame {
        var frame = Frame(width: width, height: height)
        // The result takes the frame at the end (holding it now would copy it on first write).
        var result = RenderedFrame(frame: Frame(width: 0, height: 0), targets: [], focusOrder: [], cursor: nil, scroll: 0, contentHeight: 0, viewportHeight: 0)
        guard width >= 10, height >= 4 else {
            frame.put("too small", column: 0, row: 0)
            result.frame = frame
            return result
        }
        let inspectorWidth = scene.inspector == nil ? 0 : Self.inspectorWidth(forWidth: width)
        let appWidth = width - inspectorWidth

        // Title bar.
        frame.clear(column: 0, row: 0, width: width, height: 1, style: .focused)
        let title = scene.content.title ?? scene.title
        frame.put(" berth · \(title)", column: 0, row: 0, style: .focused, limit: appWidth)
        let help = "F2 inspector · : command · ^C quit "
        if width - help.count > title.count + 12 { frame.put(help, column: width - help.count, row: 0, style: .focused) }

        // Crumbs with the back affordance.
        var column = 0
        if let back = scene.back {
            let label = back.label
            frame.put(label, column: 0, row: 1, style: CellStyle(bold: true))
            result.targets.append(PlacedTarget(target: .back, row: 1, column: 0, width: label.count))
            column = label.count + 3
        }
        var crumbText = ""
        for (index, crumb) in scene.crumbs.enumerated() {
            if index > 0 { crumbText += scene.modalStarts.contains(index) ? " ⧉ " : " › " }
            crumbText += crumb
        }
        frame.put(crumbText, column: column, row: 1, style: .faint, limit: appWidth - column)

        var top = 2
        if let banner = scene.banner {
            // Up to three rows: the signal and the fatal line matter more than the screen.
            let style = CellStyle(bold: true, colour: .red)
            let rows = ViewLayout.wrapped("✖ " + banner, width: appWidth - 1).rows.prefix(3)
            for row in rows {
                frame.clear(column: 0, row: top, width: appWidth, height: 1, style: style)
                frame.put(String(row.map(\.character)), column: 0, row: top, style: style, limit: appWidth)
                top += 1
            }
        }
        let bottom = height - 1
        let bodyHeight = drawProblems(scene.problems, into: &frame, above: bottom, below: top, width: appWidth) - top

        // The backdrop, then the front screen (boxed when presented).
        var area = (column: 0, row: top, width: appWidth, height: bodyHeight)
        if scene.isModal {
            if let backdrop = scene.backdrop {
                var layout = ViewLayout(width: appWidth - 1, focus: nil, caret: nil, shown: 0..<max(bodyHeight, 0))
                let block = contentBlock(backdrop, layout: &layout, width: appWidth - 1)
                draw(block, into: &frame, column: 1, row: top, rows: 0..<bodyHeight, maxWidth: appWidth - 1) { $0.dim = true; $0.reverse = false }
            }
            let inset = appWidth >= 30 ? 3 : 1
            let box = (column: inset, row: top + 1, width: appWidth - 2 * inset, height: max(bodyHeight - 2, 3))
            // The presenter shows above and below the layer; its margins are left blank.
            frame.clear(column: 0, row: box.row, width: box.column, height: box.height)
            frame.clear(column: box.column + box.width, row: box.row, width: appWidth - box.column - box.width, height: box.height)
            drawBox(&frame, box, title: " \(scene.content.title ?? scene.content.heading) ")
            area = (box.column + 2, box.row + 1, box.width - 4, box.height - 2)
        } else if let title = scene.content.title {
            // A screen's own title, then where it comes from.
            frame.put(title, column: 1, row: top, style: .strong, limit: appWidth - 1)
            frame.put(scene.content.heading, column: title.count + 3, row: top, style: .faint, limit: appWidth - title.count - 3)
            area = (1, top + 1, appWidth - 2, bodyHeight - 1)
        } else {
            frame.put(scene.content.heading, column: 1, row: top, style: CellStyle(bold: true), limit: appWidth - 1)
            area = (1, top + 1, appWidth - 2, bodyHeight - 1)
        }
        // Laid out with cells for the rows the last scroll showed; again if following focus
        // (or a shorter screen) moves the scroll.
        let viewport = max(area.height, 0)
        let shownFirst = max(scene.scroll, 0)
        var layout = ViewLayout(width: area.width, focus: scene.focus, caret: scene.caret, shown: shownFirst..<shownFirst + viewport)
        var block = contentBlock(scene.content, layout: &layout, width: area.width)
        result.focusOrder.reserveCapacity(block.targets.count)
        for placed in block.targets where placed.target.isFocusable { result.focusOrder.append(placed.target) }
        result.contentHeight = block.height
        result.viewportHeight = max(area.height, 0)

        // Scroll so the focused target (or the caret) is in view.
        var scroll = min(max(scene.scroll, 0), max(block.height - area.height, 0))
        if scene.followFocus, let focused = block.targets.first(where: { $0.target == scene.focus }) {
            if focused.row < scroll { scroll = focused.row }
            if focused.row >= scroll + area.height { scroll = focused.row - area.height + 1 }
        }
        if scroll != shownFirst {
            layout = ViewLayout(width: area.width, focus: scene.focus, caret: scene.caret, shown: scroll..<scroll + viewport)
            block = contentBlock(scene.content, layout: &layout, width: area.width)
        }
        result.scroll = scroll
        draw(block, into: &frame, column: area.column, row: area.row, rows: scroll..<min(scroll + area.height, block.height), maxWidth: area.width)
        for placed in block.targets where placed.row >= scroll && placed.row < scroll + area.height {
            result.targets.append(PlacedTarget(target: placed.target, row: area.row + placed.row - scroll, column: area.column + placed.column,
                                               width: min(placed.width, area.width - placed.column)))
        }
        if scroll > 0 { frame.put("↑ more", column: area.column + area.width - 6, row: area.row, style: .faint) }
        if scroll + area.height < block.height { frame.put("↓ more", column: area.column + area.width - 6, row: area.row + area.height - 1, style: .faint) }
        if let caret = layout.caretPosition, caret.row >= scroll, caret.row < scroll + area.height {
            result.cursor = FrameWriter.Cursor(column: area.column + caret.column, row: area.row + caret.row - scroll)
        }

        // Inspector.
        if let lines = scene.inspector {
            let left = appWidth
            for row in 1..<bottom { frame.put("│", column: left, row: row, style: .faint) }
            for (index, line) in lines.prefix(bottom - 1).enumerated() {
                frame.put(line, column: left + 2, row: 1 + index, style: index == 0 ? CellStyle(bold: true) : .plain, limit: inspectorWidth - 2)
            }
        }

        // Status or command line.
        if let command = scene.commandLine {
            frame.put(":" + command.text, column: 0, row: bottom, limit: width)
            result.cursor = FrameWriter.Cursor(column: min(1 + command.caret, width - 1), row: bottom)
        } else {
            frame.put(scene.status, column: 0, row: bottom, style: .faint, limit: width)
        }
        result.frame = frame
        return result
    }

    /// Draws the problems panel just above row `bottom`, in at most half the rows between
    /// `top` and it (its last row says how many more there are); returns its first row
    /// (`bottom` without problems).
    private static func drawProblems(_ problems: [String]?, into frame: inout Frame, above bottom: Int, below top: Int, width: Int) -> Int {
        guard let problems, !problems.isEmpty else { return bottom }
        let rows = min(problems.count, max((bottom - top) / 2, 2))
        let first = bottom - rows
        frame.clear(column: 0, row: first, width: width, height: rows)
        let hidden = problems.count - rows
        for index in 0..<rows {
            let isLastShown = index == rows - 1 && hidden > 0
            let line = index == 0 ? "✖ " + problems[0] : isLastShown ? "… \(hidden + 1) more lines (F2 inspector)" : "  " + problems[index]
            // A compiler's line is often wider than the terminal: say where it was cut.
            let text = line.count > width ? line.prefix(max(width - 1, 0)) + "…" : line
            let style = index == 0 ? CellStyle(bold: true, colour: .red) : isLastShown ? .faint : .plain
            if index == 0 { frame.clear(column: 0, row: first, width: width, height: 1, style: style) }
            frame.put(text, column: 0, row: first + index, style: style, limit: width)
        }
        return first
    }

    /// The inspector panel's columns on a terminal `width` wide (its text has two fewer).
    public static func inspectorWidth(forWidth width: Int) -> Int {
        min(max(width * 2 / 5, 30), width - 20)
    }

    /// A screen's tree, its note, its actions, or the start screen's routes, as one block.
    private static func contentBlock(_ content: ScreenContent, layout: inout ViewLayout, width: Int) -> Block {
        var block = Block()
        if let tree = content.tree { block.appendBelow(layout.layout(tree)) }
        if let note = content.note { block.appendBelow(ViewLayout.wrapped(note, width: width, style: .faint)) }
        if !content.routes.isEmpty {
            for route in content.routes {
                var line = Block.line("[ \(route) ]", style: layout.focus == .route(route) ? .focused : .plain, width: width)
                line.targets = [PlacedTarget(target: .route(route), row: 0, column: 0, width: line.width)]
                block.appendBelow(line)
            }
        }
        if !content.actions.isEmpty {
            if block.height > 0 { block.appendBelow(Block(rows: [[]])) }
            block.appendBelow(Block.line("Actions", style: .faint, width: width))
            var row = Block()
            for action in content.actions {
                var button = Block.line("< \(action.name) >", style: layout.focus == .action(action.name) ? .focused : .plain, width: width)
                button.targets = [PlacedTarget(target: .action(action.name), row: 0, column: 0, width: button.width)]
                if !row.rows.isEmpty, row.width + 1 + button.width > width {
                    block.appendBelow(row)
                    row = Block()
                }
                row.appendBeside(button, gap: 1)
            }
            block.appendBelow(row)
        }
        return block
    }

    private static func draw(_ block: Block, into frame: inout Frame, column: Int, row: Int, rows: Range<Int>, maxWidth: Int,
                             restyle: ((inout CellStyle) -> Void)? = nil) {
        guard !rows.isEmpty else { return }
        for (offset, index) in rows.enumerated() where index < block.rows.count {
            for (position, cell) in block.rows[index].prefix(maxWidth).enumerated() {
                var cell = cell
                restyle?(&cell.style)
                frame[column + position, row + offset] = cell
            }
        }
    }

    private static func drawBox(_ frame: inout Frame, _ box: (column: Int, row: Int, width: Int, height: Int), title: String) {
        frame.clear(column: box.column, row: box.row, width: box.width, height: box.height)
        let horizontal = String(repeating: "─", count: max(box.width - 2, 0))
        frame.put("┌" + horizontal + "┐", column: box.column, row: box.row)
        for row in box.row + 1..<box.row + box.height - 1 {
            frame.put("│", column: box.column, row: row)
            frame.put("│", column: box.column + box.width - 1, row: row)
        }
        frame.put("└" + horizontal + "┘", column: box.column, row: box.row + box.height - 1)
        frame.put(title, column: box.column + 2, row: box.row, style: CellStyle(bold: true), limit: box.width - 4)
    }
}
