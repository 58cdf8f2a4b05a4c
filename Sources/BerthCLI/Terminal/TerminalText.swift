/// Text bound for a terminal: control bytes made visible, so an escape sequence typed or
/// pasted into a command (or named in an error) never moves the cursor.
enum TerminalText {
    /// `text` with every control character except newline and tab in caret notation
    /// (`ESC` → `^[`, `DEL` → `^?`) and C1 controls as `\u{…}`.
    static func visible(_ text: String) -> String {
        guard text.unicodeScalars.contains(where: isControl) else { return text }
        var result = ""
        for scalar in text.unicodeScalars {
            switch scalar.value {
            case 0x0A, 0x09: result.unicodeScalars.append(scalar)
            case 0x00..<0x20: result += "^" + String(UnicodeScalar(UInt8(scalar.value + 0x40)))
            case 0x7F: result += "^?"
            case 0x80..<0xA0: result += "\\u{\(String(scalar.value, radix: 16, uppercase: true))}"
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    private static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        (scalar.value < 0x20 && scalar.value != 0x0A && scalar.value != 0x09) || (0x7F..<0xA0).contains(scalar.value)
    }
}
