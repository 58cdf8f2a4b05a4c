/// A minimal streaming JSON writer (no Foundation, no reflection), for the description
/// `berth_describe_v1` returns.
struct JSONWriter {
    private(set) var bytes: [UInt8] = []
    private var needsComma = [false]

    /// An object as an array element.
    mutating func beginObject() {
        comma()
        bytes.append(UInt8(ascii: "{"))
        needsComma.append(false)
    }

    /// An object as a field value: `"name": {`.
    mutating func beginObject(field name: String) {
        key(name)
        bytes.append(UInt8(ascii: "{"))
        needsComma.append(false)
    }

    mutating func endObject() {
        needsComma.removeLast()
        bytes.append(UInt8(ascii: "}"))
    }

    /// An array as a field value, right after `key`.
    mutating func beginArray() {
        bytes.append(UInt8(ascii: "["))
        needsComma.append(false)
    }

    mutating func endArray() {
        needsComma.removeLast()
        bytes.append(UInt8(ascii: "]"))
    }

    /// A string as an array element.
    mutating func element(_ text: String) {
        comma()
        string(text)
    }

    mutating func key(_ name: String) {
        comma()
        string(name)
        bytes.append(UInt8(ascii: ":"))
    }

    mutating func field(_ name: String, _ value: JSONValue) {
        key(name)
        switch value {
        case .string(let text): string(text)
        case .int(let number): bytes.append(contentsOf: String(number).utf8)
        case .bool(let flag): bytes.append(contentsOf: (flag ? "true" : "false").utf8)
        }
    }

    private mutating func comma() {
        if needsComma[needsComma.count - 1] { bytes.append(UInt8(ascii: ",")) }
        needsComma[needsComma.count - 1] = true
    }

    private mutating func string(_ text: String) {
        bytes.append(UInt8(ascii: "\""))
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""): bytes.append(contentsOf: [92, 34])
            case UInt8(ascii: "\\"): bytes.append(contentsOf: [92, 92])
            case UInt8(ascii: "\n"): bytes.append(contentsOf: [92, 110])
            case UInt8(ascii: "\r"): bytes.append(contentsOf: [92, 114])
            case UInt8(ascii: "\t"): bytes.append(contentsOf: [92, 116])
            case 0..<0x20:
                let hex = Array("0123456789abcdef".utf8)
                bytes.append(contentsOf: [92, 117, 48, 48, hex[Int(byte >> 4)], hex[Int(byte & 0xF)]])
            default: bytes.append(byte)
            }
        }
        bytes.append(UInt8(ascii: "\""))
    }
}

/// A JSON scalar field value.
enum JSONValue {
    case string(String)
    case int(Int)
    case bool(Bool)
}
