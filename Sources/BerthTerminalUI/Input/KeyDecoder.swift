/// Decodes a terminal's input bytes into events: a small state machine over ECMA-48 (ESC,
/// CSI, SS3) with xterm's key forms, SGR mouse reports (mode 1006), bracketed paste (mode
/// 2004) and the DECRQM answer for mode 2026. Bytes may arrive split anywhere: a sequence
/// cut short waits for the next read; a lone ESC is a key once `flush()` says no more came.
///
/// Hand-written rather than from terminfo: terminfo describes neither SGR mouse reports nor
/// bracketed paste nor DECRQM answers, and every terminal in use sends these xterm forms.
public struct KeyDecoder: Sendable {
    private enum State: Sendable {
        case ground
        case escape
        /// After `ESC [`: parameter and intermediate bytes so far.
        case controlSequence([UInt8])
        /// After `ESC O`.
        case singleShift
        /// Inside a bracketed paste; `text` so far.
        case paste([UInt8])
    }

    private var state = State.ground
    /// Bytes of a UTF-8 character not complete yet.
    private var pendingUTF8: [UInt8] = []

    /// The defaults.
    public init() {}

    /// True when a lone ESC is waiting: the caller calls `flush()` if no byte follows soon.
    public var isWaitingAfterEscape: Bool {
        if case .escape = state { return true }
        return false
    }

    /// The events in `bytes` (with whatever earlier calls left unfinished).
    public mutating func decode(_ bytes: some Sequence<UInt8>) -> [InputEvent] {
        var events: [InputEvent] = []
        for byte in bytes { feed(byte, into: &events) }
        return events
    }

    /// A lone ESC with nothing after it is the Escape key.
    public mutating func flush() -> [InputEvent] {
        guard case .escape = state else { return [] }
        state = .ground
        return [.key(.escape)]
    }

    private mutating func feed(_ byte: UInt8, into events: inout [InputEvent]) {
        switch state {
        case .ground:
            ground(byte, into: &events)
        case .escape:
            switch byte {
            case UInt8(ascii: "["): state = .controlSequence([])
            case UInt8(ascii: "O"): state = .singleShift
            case 0x1B:
                events.append(.key(.escape))
            default:
                // Alt+key: the key itself.
                state = .ground
                ground(byte, into: &events)
            }
        case .singleShift:
            state = .ground
            switch byte {
            case UInt8(ascii: "A"): events.append(.key(.up))
            case UInt8(ascii: "B"): events.append(.key(.down))
            case UInt8(ascii: "C"): events.append(.key(.right))
            case UInt8(ascii: "D"): events.append(.key(.left))
            case UInt8(ascii: "H"): events.append(.key(.home))
            case UInt8(ascii: "F"): events.append(.key(.end))
            case UInt8(ascii: "P")...UInt8(ascii: "S"): events.append(.key(.function(Int(byte - UInt8(ascii: "P")) + 1)))
            default: break
            }
        case .controlSequence(var collected):
            if (0x20...0x3F).contains(byte) {
                collected.append(byte)
                state = .controlSequence(collected)
                return
            }
            state = .ground
            if let event = Self.controlSequence(collected, final: byte) {
                if case .paste = event { state = .paste([]) } else { events.append(event) }
            }
        case .paste(var text):
            text.append(byte)
            let end = Array("\u{1B}[201~".utf8)
            if text.count >= end.count, Array(text.suffix(end.count)) == end {
                state = .ground
                events.append(.paste(String(decoding: text.dropLast(end.count), as: UTF8.self)))
            } else {
                state = .paste(text)
            }
        }
    }

    private mutating func ground(_ byte: UInt8, into events: inout [InputEvent]) {
        if !pendingUTF8.isEmpty || byte >= 0x80 {
            pendingUTF8.append(byte)
            let expected = Self.utf8Length(pendingUTF8[0])
            guard pendingUTF8.count >= expected else { return }
            let text = String(decoding: pendingUTF8, as: UTF8.self)
            pendingUTF8 = []
            for character in text { events.append(.key(.character(character))) }
            return
        }
        switch byte {
        case 0x1B: state = .escape
        case 0x0D, 0x0A: events.append(.key(.enter))
        case 0x09: events.append(.key(.tab))
        case 0x7F, 0x08: events.append(.key(.backspace))
        case 0x01...0x1A: events.append(.key(.control(Character(UnicodeScalar(byte + 0x60)))))
        case 0x20..<0x7F: events.append(.key(.character(Character(UnicodeScalar(byte)))))
        default: break
        }
    }

    private static func utf8Length(_ lead: UInt8) -> Int {
        switch lead {
        case 0xF0...: 4
        case 0xE0...: 3
        case 0xC0...: 2
        default: 1
        }
    }

    /// The event a complete `CSI parameters final` stands for; `.paste("")` marks a paste's start.
    private static func controlSequence(_ parameters: [UInt8], final: UInt8) -> InputEvent? {
        let text = String(decoding: parameters, as: UTF8.self)
        let numbers = text.split(separator: ";").map { Int($0.filter(\.isNumber)) ?? 0 }
        switch final {
        case UInt8(ascii: "A"): return .key(.up)
        case UInt8(ascii: "B"): return .key(.down)
        case UInt8(ascii: "C"): return .key(.right)
        case UInt8(ascii: "D"): return .key(.left)
        case UInt8(ascii: "H"): return .key(.home)
        case UInt8(ascii: "F"): return .key(.end)
        case UInt8(ascii: "Z"): return .key(.backTab)
        case UInt8(ascii: "P")...UInt8(ascii: "S") where numbers.count <= 2:
            return .key(.function(Int(final - UInt8(ascii: "P")) + 1))
        case UInt8(ascii: "~"):
            switch numbers.first ?? 0 {
            case 1, 7: return .key(.home)
            case 4, 8: return .key(.end)
            case 3: return .key(.delete)
            case 5: return .key(.pageUp)
            case 6: return .key(.pageDown)
            case 11...15: return .key(.function(numbers[0] - 10))
            case 17...21: return .key(.function(numbers[0] - 11))
            case 23, 24: return .key(.function(numbers[0] - 12))
            case 200: return .paste("")
            default: return nil
            }
        case UInt8(ascii: "M"), UInt8(ascii: "m"):
            // SGR mouse: ESC [ < button ; column ; row (M press, m release), 1-based.
            guard text.hasPrefix("<"), numbers.count == 3 else { return nil }
            let (button, column, row) = (numbers[0], numbers[1] - 1, numbers[2] - 1)
            if button & 64 != 0 { return .mouse(MouseEvent(button & 1 == 0 ? .wheelUp : .wheelDown, column: column, row: row)) }
            // Drags (32) and buttons other than the first are not used.
            guard button & 32 == 0, button & 3 == 0 else { return nil }
            return .mouse(MouseEvent(final == UInt8(ascii: "M") ? .press : .release, column: column, row: row))
        case UInt8(ascii: "y"):
            // DECRQM answer: ESC [ ? 2026 ; Ps $ y (1 set, 2 reset: supported; 0, 4: not).
            guard text.hasPrefix("?2026;"), numbers.count == 2 else { return nil }
            return .synchronizedOutput(supported: numbers[1] == 1 || numbers[1] == 2)
        default:
            return nil
        }
    }
}
