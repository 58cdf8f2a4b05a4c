/// What a person did at the terminal, decoded from its bytes.
public enum InputEvent: Equatable, Sendable {
    case key(Key)
    /// Text pasted between bracketed-paste marks (never taken as keys).
    case paste(String)
    case mouse(MouseEvent)
    /// The terminal answered the query for synchronized output (DEC mode 2026).
    case synchronizedOutput(supported: Bool)
}

/// One key press.
public enum Key: Hashable, Sendable {
    case character(Character)
    case enter, tab, backTab, escape, backspace, delete
    case up, down, left, right, home, end, pageUp, pageDown
    /// F1…F12.
    case function(Int)
    /// Ctrl with a letter (`control("c")`).
    case control(Character)
}

/// A mouse report (SGR 1006 form): cells counted from 0.
public struct MouseEvent: Equatable, Sendable {
    /// What the mouse did.
    public enum Kind: Equatable, Sendable {
        case press, release, wheelUp, wheelDown
    }

    /// What happened.
    public var kind: Kind
    /// The column (0-based).
    public var column: Int
    /// The row (0-based).
    public var row: Int

    /// A mouse event at a cell (0-based).
    public init(_ kind: Kind, column: Int, row: Int) {
        self.kind = kind
        self.column = column
        self.row = row
    }
}
