@testable import BerthTerminalUI
import Testing

/// The `:` command line as a value: keys edit it, Tab completes, Enter hands the text back.
@Suite("Terminal UI: the command line's editing and completion")
struct CommandLineEntryTests {
    private func typed(_ text: String) -> CommandLineEntry {
        var entry = CommandLineEntry()
        for character in text { _ = entry.handle(.character(character)) { _, _ in [] } }
        return entry
    }

    @Test("keys type at the caret, move it and delete; Enter hands back the text")
    func editing() {
        var entry = typed("opn")
        let moved = entry.handle(.left) { _, _ in [] }
        #expect(moved == .editing)
        _ = entry.handle(.character("e")) { _, _ in [] }
        #expect(entry.text == "open" && entry.caret == 3)
        _ = entry.handle(.home) { _, _ in [] }
        _ = entry.handle(.delete) { _, _ in [] }
        _ = entry.handle(.control("e")) { _, _ in [] }
        _ = entry.handle(.backspace) { _, _ in [] }
        #expect(entry.text == "pe" && entry.caret == 2)
        let entered = entry.handle(.enter) { _, _ in [] }
        #expect(entered == .run("pe"))
    }

    @Test("Esc, Ctrl-C and Backspace on an empty line close it; Backspace at the start of text does not")
    func closing() {
        var entry = CommandLineEntry()
        let emptied = entry.handle(.backspace) { _, _ in [] }
        #expect(emptied == .closed)
        entry = typed("x")
        _ = entry.handle(.home) { _, _ in [] }
        let atStart = entry.handle(.backspace) { _, _ in [] }
        #expect(atStart == .editing && entry.text == "x")
        let escaped = entry.handle(.escape) { _, _ in [] }
        let interrupted = entry.handle(.control("c")) { _, _ in [] }
        #expect(escaped == .closed && interrupted == .closed)
    }

    @Test("a line opened with text has the caret at its end; a paste drops newlines")
    func openedWithTextAndPaste() {
        var entry = CommandLineEntry(text: "send note ")
        #expect(entry.caret == 10)
        entry.insert(pasted: "two\nlines")
        #expect(entry.text == "send note twolines" && entry.caret == 18)
    }

    @Test("Tab completes one candidate with a space, several to their common start and lists them")
    func completion() {
        var asked: [([String], String)] = []
        var entry = typed("open com.ex")
        let outcome = entry.handle(.tab) { before, word in
            asked.append((before, word))
            return ["com.example.counter/counter", "com.example.greeter/hello"]
        }
        #expect(asked.count == 1 && asked[0].0 == ["open"] && asked[0].1 == "com.ex")
        #expect(entry.text == "open com.example.")
        #expect(outcome == .completed(listing: "com.example.counter/counter  com.example.greeter/hello"))

        entry = typed("rel")
        let single = entry.handle(.tab) { before, word in before.isEmpty && word == "rel" ? ["reload"] : [] }
        #expect(single == .completed(listing: nil))
        #expect(entry.text == "reload " && entry.caret == 7)
        // After a space the word is empty and every word before it is context.
        #expect(entry.wordAtCaret.before == ["reload"] && entry.wordAtCaret.word == "")
        let none = entry.handle(.tab) { _, _ in [] }
        #expect(none == .editing && entry.text == "reload ")
    }

    @Test("a command's outcome gives the log its lines and the status its last line or error")
    func outcomeLines() {
        let printed = TerminalCommands.Outcome(lines: ["a\nb", "c"])
        #expect(printed.logLines == ["  a", "  b", "  c"])
        #expect(printed.status == "c")
        let failed = TerminalCommands.Outcome(lines: ["a"], errors: ["no such plugin 'x'"])
        #expect(failed.logLines == ["  a", "  error: no such plugin 'x'"])
        #expect(failed.status == "error: no such plugin 'x'")
        #expect(TerminalCommands.Outcome().status == nil)
    }
}
