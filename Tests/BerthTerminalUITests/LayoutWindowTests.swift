@_spi(Engine) import BerthRuntime
@testable import BerthTerminalUI
import BerthTestSupport
import Testing

/// Only the rows on the terminal get cells: a window's rows, targets, width and height are
/// those of the whole layout (controls and one-row texts outside it are placeholders; a
/// border, a rule or a picker's options may still be drawn there).
@Suite("Terminal UI: layout of the visible rows only") @MainActor
struct LayoutWindowTests {
    private func compare(_ tree: ViewNode, window: Range<Int>, focus: FocusTarget?, hiddenRowsEmpty: Bool = false) {
        var whole = ViewLayout(width: 70, focus: focus, caret: nil)
        var part = ViewLayout(width: 70, focus: focus, caret: nil, shown: window)
        let full = whole.layout(tree)
        let cut = part.layout(tree)
        #expect(cut.height == full.height && cut.width == full.width)
        #expect(cut.targets == full.targets)
        for row in window.clamped(to: 0..<full.height) { #expect(cut.rows[row] == full.rows[row], "row \(row)") }
        guard hiddenRowsEmpty else { return }
        let hidden = (0..<full.height).filter { !window.contains($0) }
        #expect(hidden.allSatisfy { cut.rows[$0].isEmpty }, "rows outside the window hold no cells")
    }

    @Test("a 1,000-row list laid out for rows 500..<520 matches the whole layout there, with every target")
    func largeList() throws {
        let front = try FrontEndHost(opening: "org.berth.stress/grid", argument: "1000") { $0.stage("stress.json") }
        let tree = try #require(front.host.visibleRouter?.module?.lastTree?.root)
        let focus = tree.firstNode { $0.fields["label"] == "row 510: 0" }.map { FocusTarget.view($0.id) }
        #expect(focus != nil)
        compare(tree, window: 500..<520, focus: focus, hiddenRowsEmpty: true)
    }

    @Test("Inbox (HStacks, a Spacer, a bordered panel) laid out for a few rows matches the whole layout there")
    func inbox() throws {
        let front = try FrontEndHost(opening: "inbox")
        let tree = try #require(front.host.visibleRouter?.module?.lastTree?.root)
        for window in [0..<3, 2..<5, 6..<9, 10..<14] { compare(tree, window: window, focus: nil) }
    }
}
