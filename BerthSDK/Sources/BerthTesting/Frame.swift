import Foundation

/// What the headless terminal shows: the text of every row and one style letter per cell.
public struct Frame: Sendable, Equatable {
    /// The rows, trailing blanks dropped, joined by newlines.
    public var text: String
    /// One letter per cell, rows as in `text`: ` ` plain, `r` reverse (focus, title bar),
    /// `b` bold, `d` dim, `i` italic, `u` underline, `c` colour only.
    public var styles: String

    /// A frame's text and style mask.
    public init(text: String, styles: String) {
        self.text = text
        self.styles = styles
    }

    /// The golden file's contents: the text, a `--- styles` line, the style mask, a newline.
    public var golden: String { text + "\n--- styles\n" + styles + "\n" }

    /// The row `index` (0 is the title bar); empty past the last row.
    public func line(_ index: Int) -> String {
        let rows = text.components(separatedBy: "\n")
        return rows.indices.contains(index) ? rows[index] : ""
    }
}
