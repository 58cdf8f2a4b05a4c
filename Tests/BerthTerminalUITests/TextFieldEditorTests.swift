@testable import BerthTerminalUI
import Testing

/// A focused text field's text and caret as a value: what each key changes.
@Suite("Terminal UI: editing a text field")
struct TextFieldEditorTests {
    @Test("with no caret kept it is at the end; a kept one is held inside the text")
    func caretStart() {
        #expect(TextFieldEditor(text: "abc", caret: nil).caret == 3)
        #expect(TextFieldEditor(text: "abc", caret: 1).caret == 1)
        #expect(TextFieldEditor(text: "abc", caret: 9).caret == 3)
    }

    @Test("arrows, Home and End move only the caret, and stop at either end")
    func caretMoves() {
        var editor = TextFieldEditor(text: "abc", caret: nil)
        var change: TextFieldEditor.Change
        change = editor.apply(.right)
        #expect(change == .caret && editor.caret == 3)
        change = editor.apply(.left)
        #expect(change == .caret && editor.caret == 2)
        change = editor.apply(.home)
        #expect(change == .caret && editor.caret == 0)
        change = editor.apply(.left)
        #expect(change == .caret && editor.caret == 0)
        change = editor.apply(.end)
        #expect(change == .caret && editor.caret == 3)
        #expect(editor.text == "abc")
    }

    @Test("typing inserts at the caret; Backspace and Delete remove around it, or change nothing at an end")
    func textChanges() {
        var editor = TextFieldEditor(text: "ac", caret: 1)
        var change: TextFieldEditor.Change
        change = editor.apply(.character("b"))
        #expect(change == .text && editor.text == "abc" && editor.caret == 2)
        change = editor.apply(.backspace)
        #expect(change == .text && editor.text == "ac" && editor.caret == 1)
        change = editor.apply(.delete)
        #expect(change == .text && editor.text == "a" && editor.caret == 1)
        change = editor.apply(.delete)
        #expect(change == .none)
        _ = editor.apply(.home)
        change = editor.apply(.backspace)
        #expect(change == .none && editor.text == "a")
    }

    @Test("a paste keeps newlines as spaces; keys a field does not take change nothing")
    func pasteAndOtherKeys() {
        var editor = TextFieldEditor(text: "", caret: nil)
        var change: TextFieldEditor.Change
        change = editor.insert("one\ntwo")
        #expect(change == .text && editor.text == "one two" && editor.caret == 7)
        for key: Key in [.enter, .tab, .escape, .up, .pageDown, .function(3), .control("a")] {
            change = editor.apply(key)
            #expect(change == .none)
        }
        #expect(editor.text == "one two" && editor.caret == 7)
    }
}
