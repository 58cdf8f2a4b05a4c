/// How one cell is drawn: a few attributes every terminal of the last thirty years knows
/// (SGR 1, 2, 4, 7) and an optional colour. Colour is dropped when the output takes none
/// (`NO_COLOR`, `TERM=dumb`): attributes alone keep focus and emphasis visible.
public struct CellStyle: Hashable, Sendable {
    public var bold = false
    public var dim = false
    public var underline = false
    public var reverse = false
    public var colour: Colour?

    /// The eight ANSI colours the front end uses (foreground only).
    public enum Colour: UInt8, Sendable {
        case red = 31, green = 32, yellow = 33, blue = 34, magenta = 35, cyan = 36
    }

    public init(bold: Bool = false, dim: Bool = false, underline: Bool = false, reverse: Bool = false, colour: Colour? = nil) {
        self.bold = bold
        self.dim = dim
        self.underline = underline
        self.reverse = reverse
        self.colour = colour
    }

    public static let plain = CellStyle()
    public static let focused = CellStyle(reverse: true)
    public static let faint = CellStyle(dim: true)
    public static let strong = CellStyle(bold: true)

    /// One letter for a golden frame's style mask: ` ` plain, `r` reverse, `b` bold,
    /// `d` dim, `u` underline, `c` colour only (the first that applies, in that order).
    public var maskLetter: Character {
        if reverse { return "r" }
        if bold { return "b" }
        if dim { return "d" }
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
        if underline { parameters.append("4") }
        if reverse { parameters.append("7") }
        if colours, let colour { parameters.append(String(colour.rawValue)) }
        return parameters.joined(separator: ";")
    }
}
