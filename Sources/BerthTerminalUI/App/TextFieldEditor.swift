/// The focused text field's line being edited: its text and caret, changed by one key or a
/// paste. The front end sends the whole new text as view input whenever the text changes.
struct TextFieldEditor: Equatable {
    /// What a key or a paste changed.
    enum Change: Equatable {
        /// Nothing (a key fields do not take, or a delete with nothing to delete).
        case none
        /// Only the caret.
        case caret
        /// The text (and the caret with it).
        case text
    }

    private var characters: [Character]
    /// The caret, in characters from the start.
    private(set) var caret: Int

    /// The field's text now.
    var text: String { String(characters) }

    /// A field showing `text` with the caret at `caret` (kept inside the text), or at the
    /// end when none was kept.
    init(text: String, caret: Int?) {
        characters = Array(text)
        self.caret = min(caret ?? characters.count, characters.count)
    }

    /// Applies one key: ←/→/Home/End move the caret, Backspace/Delete delete, a character is typed.
    mutating func apply(_ key: Key) -> Change {
        switch key {
        case .left: return moveCaret(by: -1)
        case .right: return moveCaret(by: 1)
        case .home: return moveCaret(by: -characters.count)
        case .end: return moveCaret(by: characters.count)
        case .backspace:
            guard caret > 0 else { return .none }
            characters.remove(at: caret - 1)
            caret -= 1
            return .text
        case .delete:
            guard caret < characters.count else { return .none }
            characters.remove(at: caret)
            return .text
        case .character(let character):
            return insert(String(character))
        case .enter, .tab, .backTab, .escape, .up, .down, .pageUp, .pageDown, .function, .control:
            return .none
        }
    }

    /// Types `typed` at the caret; a newline would end the field, so it is kept as a space.
    mutating func insert(_ typed: String) -> Change {
        let typed = typed.map { $0.isNewline ? " " : $0 }
        characters.insert(contentsOf: typed, at: caret)
        caret += typed.count
        return .text
    }

    private mutating func moveCaret(by step: Int) -> Change {
        caret = min(max(caret + step, 0), characters.count)
        return .caret
    }
}
