/// How one cell is drawn: a few attributes every terminal of the last thirty years knows
/// (SGR 1, 2, 3, 4, 7) and an optional colour. Colour is dropped when the output takes none
/// (`NO_COLOR`, `TERM=dumb`): attributes alone keep focus and emphasis visible.
public struct CellStyle: Hashable, Sendable {
    /// SGR 1.
    public var bold = false
    /// SGR 2.
    public var dim = false
    /// SGR 3 (a terminal without italics may show it reversed or not at all).
    public var italic = false
    /// SGR 4.
    public var underline = false
    /// SGR 7 (focus).
    public var reverse = false
    /// The foreground colour, if any (dropped without colour support).
    public var colour: Colour?

    /// The eight ANSI colours (foreground only).
    public enum Colour: UInt8, Sendable {
        case black = 30, red = 31, green = 32, yellow = 33, blue = 34, magenta = 35, cyan = 36, white = 37

        /// A view style's colour name (`ViewStyle.colours`).
        init?(name: String) {
            guard let index = ["black", "red", "green", "yellow", "blue", "magenta", "cyan", "white"].firstIndex(of: name) else { return nil }
            self.init(rawValue: 30 + UInt8(index))
        }
    }

    /// A style with the given attributes.
    public init(bold: Bool = false, dim: Bool = false, italic: Bool = false, underline: Bool = false, reverse: Bool = false, colour: Colour? = nil) {
        self.bold = bold
        self.dim = dim
        self.italic = italic
        self.underline = underline
        self.reverse = reverse
        self.colour = colour
    }

    /// No attribute.
    public static let plain = CellStyle()
    /// The focused control: reverse video.
    public static let focused = CellStyle(reverse: true)
    /// Secondary text: dim.
    public static let faint = CellStyle(dim: true)
    /// Headings: bold.
    public static let strong = CellStyle(bold: true)

    /// One letter for a golden frame's style mask: ` ` plain, `r` reverse, `b` bold,
    /// `d` dim, `i` italic, `u` underline, `c` colour only (the first that applies, in that order).
    public var maskLetter: Character {
        if reverse { return "r" }
        if bold { return "b" }
        if dim { return "d" }
        if italic { return "i" }
        if underline { return "u" }
        if colour != nil { return "c" }
        return " "
    }

    /// The SGR parameters that draw this style from a reset (`0;1;7`), colour included
    /// only when `colours` is on.
    func sgrParameters(colours: Bool) -> String {
        var parameters = ["0"]
        if bold { parameters.append("1") }
        if dim { parameters.append("2") }
        if italic { parameters.append("3") }
        if underline { parameters.append("4") }
        if reverse { parameters.append("7") }
        if colours, let colour { parameters.append(String(colour.rawValue)) }
        return parameters.joined(separator: ";")
    }
}
