@_spi(Engine) import BerthCore
internal import CBerth

/// How a view asks to be drawn (view-tree version 2, `BERTH_VIEW_FIELD_STYLE`): emphasis, a
/// foreground colour, padding and a border. A node keeps it as text fields, the same in
/// both tree forms: `emphasis` (`bold italic underline dim`, the ones set), `foreground`
/// (`red`), `padding` (cells) and `border` (`true`).
public struct ViewStyle: Sendable, Equatable {
    /// Emphasis.
    public var bold = false, italic = false, underline = false, dim = false
    /// One of `ViewStyle.colours`, or nil for the terminal's own.
    public var foreground: String?
    /// Empty cells on every side, inside the border.
    public var padding = 0
    /// Whether a box is drawn around the view.
    public var border = false

    /// The foreground colours, by `BERTH_VIEW_COLOR_*` number less one.
    public static let colours = ["black", "red", "green", "yellow", "blue", "magenta", "cyan", "white"]

    /// The style a node's fields describe (none: plain).
    public init(fields: [String: String]) {
        if let emphasis = fields["emphasis"] {
            for word in emphasis.split(separator: " ") {
                switch word {
                case "bold": bold = true
                case "italic": italic = true
                case "underline": underline = true
                case "dim": dim = true
                default: continue
                }
            }
        }
        foreground = fields["foreground"].flatMap { Self.colours.contains($0) ? $0 : nil }
        padding = min(max(fields["padding"].flatMap { Int($0) } ?? 0, 0), 255)
        border = fields["border"] == "true"
    }

    /// Whether the style asks for nothing.
    public var isPlain: Bool { self == ViewStyle(fields: [:]) }
}

/// The style word of the binary tree as a node's text fields.
enum ViewStyleFields {
    static func add(word: UInt32, to fields: inout [String: String]) {
        let emphasis = [(BERTH_VIEW_STYLE_BOLD, "bold"), (BERTH_VIEW_STYLE_ITALIC, "italic"),
                        (BERTH_VIEW_STYLE_UNDERLINE, "underline"), (BERTH_VIEW_STYLE_DIM, "dim")]
            .filter { word & UInt32($0.0) != 0 }.map(\.1)
        if !emphasis.isEmpty { fields["emphasis"] = emphasis.joined(separator: " ") }
        let colour = Int(word >> UInt32(BERTH_VIEW_STYLE_FOREGROUND_SHIFT) & 0xFF)
        if colour >= 1, colour <= ViewStyle.colours.count { fields["foreground"] = ViewStyle.colours[colour - 1] }
        let padding = word >> UInt32(BERTH_VIEW_STYLE_PADDING_SHIFT) & 0xFF
        if padding > 0 { fields["padding"] = String(padding) }
        if word & UInt32(BERTH_VIEW_STYLE_BORDER) != 0 { fields["border"] = "true" }
    }
}
