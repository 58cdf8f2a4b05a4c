/// The escape sequences the front end sends to a terminal, in one place. All are ECMA-48 or
/// xterm private modes that terminals which lack them ignore.
enum TerminalModes {
    /// Alternate screen, cursor hidden, SGR mouse reports (clicks and wheel), bracketed
    /// paste, then a query: does the terminal support synchronized output (DECRQM 2026)?
    static let enter = "\u{1B}[?1049h\u{1B}[?25l\u{1B}[?1000h\u{1B}[?1006h\u{1B}[?2004h\u{1B}[?2026$p"
    /// Everything `enter` turned on, off again, and the main screen back with its cursor.
    static let leave = "\u{1B}[?2026l\u{1B}[0m\u{1B}[?2004l\u{1B}[?1006l\u{1B}[?1000l\u{1B}[?25h\u{1B}[?1049l"
}
