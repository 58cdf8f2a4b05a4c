import BerthTerminalUI
import BerthTestSupport
import Testing

@Suite("Terminal UI: frame buffer and diff")
struct FrameWriterTests {
    private func frame(_ lines: [String], width: Int = 20, height: Int = 4) -> Frame {
        var frame = Frame(width: width, height: height)
        for (row, line) in lines.enumerated() { frame.put(line, column: 0, row: row) }
        return frame
    }

    @Test("an unchanged frame writes nothing at all")
    func unchanged() {
        let writer = FrameWriter(colours: false)
        let old = frame(["Count: 1", "[ Add ]"])
        #expect(writer.update(from: old, cursor: nil, to: old, cursor: nil).isEmpty)
        // An unchanged 200×60 frame, as the benchmark's case.
        var large = Frame(width: 200, height: 60)
        for row in 0..<60 { large.put(String(repeating: "x", count: 200), column: 0, row: row) }
        #expect(writer.update(from: large, cursor: nil, to: large, cursor: nil).isEmpty)
    }

    @Test("only the cells that changed are written, after one cursor move")
    func changedCells() {
        let writer = FrameWriter(colours: false)
        let old = frame(["Count: 1", "[ Add ]"])
        let new = frame(["Count: 2", "[ Add ]"])
        let text = String(decoding: writer.update(from: old, cursor: nil, to: new, cursor: nil), as: UTF8.self)
        #expect(text == "\u{1B}[?25l\u{1B}[1;8H\u{1B}[0m2")
        #expect(!text.contains("Count"))
    }

    @Test("applied to a terminal, the bytes of any update give the new frame")
    func appliedGivesFrame() {
        let writer = FrameWriter(colours: false, synchronized: true)
        var screen = ScreenEmulator(width: 20, height: 4)
        let first = frame(["hello", "", "world"])
        screen.apply(writer.update(from: nil, cursor: nil, to: first, cursor: nil))
        #expect(screen.text == first.text)
        var second = frame(["help", "x", "", "last line"])
        second.restyle(column: 0, row: 1, count: 1) { $0.reverse = true }
        let bytes = writer.update(from: first, cursor: nil, to: second, cursor: .init(column: 2, row: 3))
        #expect(String(decoding: bytes, as: UTF8.self).hasPrefix("\u{1B}[?2026h"))
        screen.apply(bytes)
        #expect(screen.text == second.text)
        #expect(screen.isReversed(column: 0, row: 1))
        #expect(!screen.isReversed(column: 0, row: 3))
        #expect(screen.cursor == (2, 3) && screen.cursorVisible)
    }

    @Test("colour only when asked: NO_COLOR keeps attributes and drops colours")
    func colours() {
        var styled = Frame(width: 4, height: 1)
        styled.put("!", column: 0, row: 0, style: CellStyle(bold: true, colour: .red))
        let withColour = String(decoding: FrameWriter(colours: true).update(from: nil, cursor: nil, to: styled, cursor: nil), as: UTF8.self)
        let without = String(decoding: FrameWriter(colours: false).update(from: nil, cursor: nil, to: styled, cursor: nil), as: UTF8.self)
        #expect(withColour.contains("\u{1B}[0;1;31m"))
        #expect(without.contains("\u{1B}[0;1m") && !without.contains("31"))
    }
}

@Suite("Terminal UI: key decoding")
struct KeyDecoderTests {
    @Test("keys, arrows, Shift-Tab, function keys and UTF-8, even split across reads")
    func keys() {
        var decoder = KeyDecoder()
        #expect(decoder.decode(Array("a\t\r".utf8)) == [.key(.character("a")), .key(.tab), .key(.enter)])
        #expect(decoder.decode([0x1B, 0x5B]) == [])
        #expect(decoder.decode([0x41]) == [.key(.up)])
        #expect(decoder.decode(Array("\u{1B}[Z\u{1B}OQ\u{1B}[3~\u{1B}[12~".utf8)) == [.key(.backTab), .key(.function(2)), .key(.delete), .key(.function(2))])
        #expect(decoder.decode([0xC3]) == [])
        #expect(decoder.decode([0xA9, 0x03, 0x7F]) == [.key(.character("é")), .key(.control("c")), .key(.backspace)])
    }

    @Test("a lone ESC is Escape once no byte follows")
    func escape() {
        var decoder = KeyDecoder()
        #expect(decoder.decode([0x1B]) == [])
        #expect(decoder.isWaitingAfterEscape)
        #expect(decoder.flush() == [.key(.escape)])
    }

    @Test("SGR mouse reports, bracketed paste and the answer about synchronized output")
    func reports() {
        var decoder = KeyDecoder()
        #expect(decoder.decode(Array("\u{1B}[<0;10;5M\u{1B}[<0;10;5m\u{1B}[<65;3;4M".utf8)) == [
            .mouse(MouseEvent(.press, column: 9, row: 4)), .mouse(MouseEvent(.release, column: 9, row: 4)),
            .mouse(MouseEvent(.wheelDown, column: 2, row: 3)),
        ])
        #expect(decoder.decode(Array("\u{1B}[200~a\tb\u{1B}[20".utf8)) == [])
        #expect(decoder.decode(Array("1~x".utf8)) == [.paste("a\tb"), .key(.character("x"))])
        #expect(decoder.decode(Array("\u{1B}[?2026;2$y".utf8)) == [.synchronizedOutput(supported: true)])
        #expect(decoder.decode(Array("\u{1B}[?2026;0$y".utf8)) == [.synchronizedOutput(supported: false)])
    }
}
