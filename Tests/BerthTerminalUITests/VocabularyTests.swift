@_spi(Engine) import BerthRuntime
@testable import BerthTerminalUI
import BerthTestSupport
import Testing

/// Tree version 2 on the terminal: Inbox's picker, its styles and its title.
@Suite("Terminal UI: view vocabulary") @MainActor
struct VocabularyTests {
    /// Inbox open (it shows all of tree version 2), made anew for each test.
    let front: FrontEndHost

    init() throws {
        front = try FrontEndHost(opening: "inbox")
    }

    @Test("a Picker takes focus; ← → + - step it, Enter moves round its options, a click on an option selects it")
    func picker() async throws {
        let terminal = front.terminal
        #expect(await terminal.click(on: "File new mail in"))
        guard case .view(let id)? = terminal.app.places.focus[front.host.visibleRouter?.id ?? 0] else {
            Issue.record("the click did not focus the picker")
            return
        }
        #expect(id.hasSuffix("/Picker"))
        #expect(terminal.text.contains("● Inbox"))
        await terminal.press(.right)
        #expect(terminal.text.contains("● Archive") && terminal.text.contains("filed in Archive"))
        await terminal.press(.character("-"))
        #expect(terminal.text.contains("● Inbox"))
        await terminal.press(.enter)
        await terminal.press(.enter)
        #expect(terminal.text.contains("● Spam"))
        await terminal.press(.character(" "))
        #expect(terminal.text.contains("● Inbox") && terminal.text.contains("○ Spam"))
        #expect(await terminal.click(on: "○ Spam"))
        #expect(terminal.text.contains("● Spam") && terminal.text.contains("filed in Spam"))
        // The options are clicked, never focused: Tab order has the picker once.
        #expect(terminal.app.rendered?.focusOrder.filter { $0 == .view(id) }.count == 1)
    }

    @Test("emphasis and colour reach the cells; NO_COLOR (no colours) drops the colour and keeps the emphasis")
    func styles() throws {
        let frame = front.terminal.frame
        let row = try #require((0..<frame.height).first { frame.line($0).contains("Inbox · 0 message(s)") })
        let count = frame[1, row].style
        #expect(count.bold && count.colour == .cyan)
        let filed = try #require((0..<frame.height).first { frame.line($0).contains("filed in Inbox") })
        let line = frame.line(filed)
        let range = try #require(line.range(of: "filed"))
        let column = line.distance(from: line.startIndex, to: range.lowerBound)
        #expect(frame[column, filed].style.italic)
        let coloured = String(decoding: FrameWriter(colours: true).update(from: nil, cursor: nil, to: frame, cursor: nil), as: UTF8.self)
        let plain = String(decoding: FrameWriter(colours: false).update(from: nil, cursor: nil, to: frame, cursor: nil), as: UTF8.self)
        #expect(coloured.contains("\u{1B}[0;1;36m") && coloured.contains("\u{1B}[0;3m"))
        #expect(!plain.contains(";36m") && plain.contains("\u{1B}[0;1m") && plain.contains("\u{1B}[0;3m"))
    }

    @Test("a screen's title names it in the title bar and the heading; the route stays beside it")
    func title() throws {
        let text = front.terminal.text
        #expect(text.hasPrefix(" berth · Inbox "))
        #expect(text.contains(" Inbox  com.example.inbox/inbox · screen 1"))
    }
}
