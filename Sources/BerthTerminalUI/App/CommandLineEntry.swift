/// The `:` command line while it is open: its text and caret, edited key by key. Tab
/// completes the word before the caret from candidates the caller looks up; Enter hands
/// the text back to run.
struct CommandLineEntry: Equatable {
    /// What a key did to the line.
    enum Outcome: Equatable {
        /// The line was edited, or the key did nothing.
        case editing
        /// Tab completed the word; `listing` names the candidates when there were several.
        case completed(listing: String?)
        /// Esc, Ctrl-C, or Backspace on an empty line: closed without running.
        case closed
        /// Enter: closed, to run this text.
        case run(String)
    }

    /// What is typed.
    private(set) var text: String
    /// The caret, in characters from the start.
    private(set) var caret: Int

    /// A line holding `text` (empty when just opened) with the caret at its end.
    init(text: String = "") {
        self.text = text
        caret = text.count
    }

    /// Applies one key; `candidates` gives the completions of `word` after the words `before`.
    mutating func handle(_ key: Key, candidates: (_ before: [String], _ word: String) -> [String]) -> Outcome {
        var characters = Array(text)
        switch key {
        case .escape, .control("c"):
            return .closed
        case .enter:
            return .run(text)
        case .backspace:
            guard caret > 0 else { return characters.isEmpty ? .closed : .editing }
            characters.remove(at: caret - 1)
            caret -= 1
        case .delete where caret < characters.count: characters.remove(at: caret)
        case .left: caret = max(caret - 1, 0)
        case .right: caret = min(caret + 1, characters.count)
        case .home, .control("a"): caret = 0
        case .end, .control("e"): caret = characters.count
        case .tab:
            return complete(candidates)
        case .character(let character):
            characters.insert(character, at: caret)
            caret += 1
        default: break
        }
        text = String(characters)
        return .editing
    }

    /// Inserts pasted text at the caret; a newline would run the line, so newlines are dropped.
    mutating func insert(pasted: String) {
        insert(Array(pasted.filter { !$0.isNewline }))
    }

    /// The words before the caret and the word being typed (empty after a space).
    var wordAtCaret: (before: [String], word: String) {
        let before = String(text.prefix(caret))
        let words = before.split(separator: " ", omittingEmptySubsequences: true).map(String.init)
        let word = before.hasSuffix(" ") || before.isEmpty ? "" : (words.last ?? "")
        return (word.isEmpty ? words : Array(words.dropLast()), word)
    }

    /// Completes the word before the caret to the candidates' common start, and a space
    /// after it when there is only one.
    private mutating func complete(_ candidates: (_ before: [String], _ word: String) -> [String]) -> Outcome {
        let (before, word) = wordAtCaret
        let found = candidates(before, word)
        guard let first = found.first else { return .editing }
        var common = first
        for candidate in found.dropFirst() {
            while !candidate.hasPrefix(common) { common.removeLast() }
        }
        insert(Array(common.dropFirst(word.count)) + (found.count == 1 ? [" "] : []))
        return .completed(listing: found.count > 1 ? found.prefix(12).joined(separator: "  ") : nil)
    }

    private mutating func insert(_ typed: [Character]) {
        var characters = Array(text)
        characters.insert(contentsOf: typed, at: caret)
        caret += typed.count
        text = String(characters)
    }
}
