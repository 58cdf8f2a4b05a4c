@_spi(Engine) import BerthCore
/// The view tree a plugin's v1.0 `render` writes: UTF-8 JSON (Docs/state.md), parsed by
/// hand into `ViewNode`s (no Foundation: the same one-line errors as the binary form).
/// The Swift SDK writes the binary form through `render_tree`; C plugins such as the test
/// fixtures keep this one.
enum LegacyJSONTree {
    /// The tree, nil for no bytes; throws a one-line reason for anything else.
    static func parse(_ bytes: [UInt8]) throws(ViewTreeError) -> ViewNode? {
        guard !bytes.isEmpty else { return nil }
        try RenderLimits.checkSize(bytes)
        // Counted before anything is built: a tree over a limit costs the host one pass
        // over its bytes, not a parse of the first 200,000 views or millions of values.
        let census = JSONScanner.census(bytes)
        guard census.objects <= RenderLimits.maximumNodes else { throw RenderLimits.nodesError(census.objects) }
        guard census.tokens <= RenderLimits.maximumJSONTokens else {
            throw ViewTreeError("the JSON has \(census.tokens) values and member names, over the limit of \(RenderLimits.maximumJSONTokens)")
        }
        var parser = JSONScanner(bytes: bytes)
        let value = try parser.value(depth: 0)
        parser.skipSpace()
        guard parser.offset == bytes.count else { throw ViewTreeError("unexpected text after the root node at byte \(parser.offset)") }
        return try node(value, path: "the root node")
    }

    private static func node(_ value: JSONScanner.Value, path: String) throws(ViewTreeError) -> ViewNode {
        guard case .object(let members) = value else { throw ViewTreeError("\(path) is not an object") }
        var type: String?
        var id: String?
        var fields: [String: String] = [:]
        var children: [ViewNode] = []
        for (name, member) in members {
            switch (name, member) {
            case ("type", .string(let text)): type = text
            case ("id", .string(let text)): id = text
            case ("text", .string(let text)), ("label", .string(let text)), ("title", .string(let text)),
                 ("emphasis", .string(let text)), ("foreground", .string(let text)):
                fields[name] = text
            case ("isOn", .bool(let flag)), ("branch", .bool(let flag)), ("border", .bool(let flag)): fields[name] = flag ? "true" : "false"
            case ("value", .number(let text)), ("padding", .number(let text)):
                guard let number = Int(text) else { throw ViewTreeError("field '\(name)' of \(path) is not an integer") }
                fields[name] = String(number)
            case ("children", .array(let elements)):
                for (index, element) in elements.enumerated() { children.append(try node(element, path: "child \(index) of \(id ?? path)")) }
            case ("type", _), ("id", _), ("text", _), ("label", _), ("isOn", _), ("branch", _), ("value", _), ("children", _),
                 ("title", _), ("emphasis", _), ("foreground", _), ("border", _), ("padding", _):
                throw ViewTreeError("field '\(name)' of \(path) has the wrong JSON type")
            default: continue
            }
        }
        guard let type else { throw ViewTreeError("\(path) has no 'type'") }
        guard let id else { throw ViewTreeError("\(path) has no 'id'") }
        return ViewNode(type: type, id: id, fields: fields, children: children)
    }
}

/// A small JSON reader: values as a tree of enum cases, numbers kept as their text.
private struct JSONScanner {
    indirect enum Value {
        case object([(String, Value)])
        case array([Value])
        case string(String)
        case number(String)
        case bool(Bool)
        case null
    }

    /// Deeper nesting is refused instead of overflowing the stack.
    private static let depthLimit = 512

    let bytes: [UInt8]
    var offset = 0

    /// What `value(depth:)` would build at most, counted in one pass that builds nothing:
    /// the objects (each view is one) and the tokens, each a value or a member name (an
    /// object, an array, a string, or a run of the letters, digits and signs a number or
    /// literal is made of).
    static func census(_ bytes: [UInt8]) -> (objects: Int, tokens: Int) {
        // Plain comparisons and a table: the host runs this on every JSON render, debug
        // builds included, where each `UInt8(ascii:)` or range match would be a call.
        let quote: UInt8 = 0x22, backslash: UInt8 = 0x5C
        return bytes.withUnsafeBufferPointer { buffer in
            Self.tokenStarts.withUnsafeBufferPointer { kinds in
                var objects = 0
                var tokens = 0
                var inString = false
                var escaped = false
                var inWord = false
                for byte in buffer {
                    if inString {
                        if escaped {
                            escaped = false
                        } else if byte == backslash {
                            escaped = true
                        } else if byte == quote {
                            inString = false
                        }
                        continue
                    }
                    let kind = kinds[Int(byte)]
                    if kind == .word {
                        if !inWord { tokens += 1 }
                        inWord = true
                        continue
                    }
                    inWord = false
                    if kind == .other { continue }
                    tokens += 1
                    if kind == .string { inString = true } else if kind == .object { objects += 1 }
                }
                return (objects, tokens)
            }
        }
    }

    private enum TokenStart: UInt8 { case other, word, string, object, array }
    /// Each byte's `TokenStart` outside strings.
    private static let tokenStarts: [TokenStart] = (0...255).map { byte in
        switch UInt8(byte) {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
             UInt8(ascii: "-"), UInt8(ascii: "+"), UInt8(ascii: "."):
            .word
        case UInt8(ascii: "\""): .string
        case UInt8(ascii: "{"): .object
        case UInt8(ascii: "["): .array
        default: .other
        }
    }

    mutating func skipSpace() {
        while offset < bytes.count, [0x20, 0x0A, 0x0D, 0x09].contains(bytes[offset]) { offset += 1 }
    }

    mutating func value(depth: Int) throws(ViewTreeError) -> Value {
        guard depth < Self.depthLimit else { throw ViewTreeError("the JSON nests deeper than \(Self.depthLimit) levels") }
        skipSpace()
        guard offset < bytes.count else { throw ViewTreeError("the JSON ends where a value should be") }
        switch bytes[offset] {
        case UInt8(ascii: "{"): return try object(depth: depth)
        case UInt8(ascii: "["): return try array(depth: depth)
        case UInt8(ascii: "\""): return .string(try string())
        case UInt8(ascii: "t"): try literal("true"); return .bool(true)
        case UInt8(ascii: "f"): try literal("false"); return .bool(false)
        case UInt8(ascii: "n"): try literal("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number(number())
        default: throw ViewTreeError("the text is not JSON: unexpected '\(Character(Unicode.Scalar(bytes[offset])))' at byte \(offset)")
        }
    }

    private mutating func object(depth: Int) throws(ViewTreeError) -> Value {
        offset += 1
        var members: [(String, Value)] = []
        skipSpace()
        if offset < bytes.count, bytes[offset] == UInt8(ascii: "}") { offset += 1; return .object(members) }
        while true {
            skipSpace()
            guard offset < bytes.count, bytes[offset] == UInt8(ascii: "\"") else { throw ViewTreeError("the text is not JSON: expected a member name at byte \(offset)") }
            let name = try string()
            try expect(":")
            members.append((name, try value(depth: depth + 1)))
            skipSpace()
            if try next(",", or: "}") { return .object(members) }
        }
    }

    private mutating func array(depth: Int) throws(ViewTreeError) -> Value {
        offset += 1
        var elements: [Value] = []
        skipSpace()
        if offset < bytes.count, bytes[offset] == UInt8(ascii: "]") { offset += 1; return .array(elements) }
        while true {
            elements.append(try value(depth: depth + 1))
            skipSpace()
            if try next(",", or: "]") { return .array(elements) }
        }
    }

    /// Consumes `separator` (false) or `end` (true).
    private mutating func next(_ separator: Unicode.Scalar, or end: Unicode.Scalar) throws(ViewTreeError) -> Bool {
        guard offset < bytes.count else { throw ViewTreeError("the text is not JSON: it ends inside an object or array") }
        let byte = bytes[offset]
        offset += 1
        if byte == UInt8(ascii: end) { return true }
        guard byte == UInt8(ascii: separator) else { throw ViewTreeError("the text is not JSON: expected '\(separator)' or '\(end)' at byte \(offset - 1)") }
        return false
    }

    private mutating func expect(_ scalar: Unicode.Scalar) throws(ViewTreeError) {
        skipSpace()
        guard offset < bytes.count, bytes[offset] == UInt8(ascii: scalar) else { throw ViewTreeError("the text is not JSON: expected '\(scalar)' at byte \(offset)") }
        offset += 1
    }

    private mutating func literal(_ word: String) throws(ViewTreeError) {
        let utf8 = Array(word.utf8)
        guard bytes.count - offset >= utf8.count, Array(bytes[offset..<offset + utf8.count]) == utf8 else {
            throw ViewTreeError("the text is not JSON: unexpected text at byte \(offset)")
        }
        offset += utf8.count
    }

    private mutating func number() -> String {
        let start = offset
        while offset < bytes.count, "+-0123456789.eE".utf8.contains(bytes[offset]) { offset += 1 }
        return String(decoding: bytes[start..<offset], as: UTF8.self)
    }

    private mutating func string() throws(ViewTreeError) -> String {
        offset += 1
        var utf8: [UInt8] = []
        while offset < bytes.count {
            let byte = bytes[offset]
            offset += 1
            switch byte {
            case UInt8(ascii: "\""): return String(decoding: utf8, as: UTF8.self)
            case UInt8(ascii: "\\"):
                guard offset < bytes.count else { break }
                let escape = bytes[offset]
                offset += 1
                switch escape {
                case UInt8(ascii: "n"): utf8.append(0x0A)
                case UInt8(ascii: "t"): utf8.append(0x09)
                case UInt8(ascii: "r"): utf8.append(0x0D)
                case UInt8(ascii: "b"): utf8.append(0x08)
                case UInt8(ascii: "f"): utf8.append(0x0C)
                case UInt8(ascii: "u"): utf8.append(contentsOf: try unicodeEscape())
                default: utf8.append(escape)
                }
            case 0..<0x20: throw ViewTreeError("the text is not JSON: a control character inside a string at byte \(offset - 1)")
            default: utf8.append(byte)
            }
            guard utf8.count <= RenderLimits.maximumStringBytes else { throw RenderLimits.stringError("string", utf8.count) }
        }
        throw ViewTreeError("the text is not JSON: a string is not closed")
    }

    /// `\uXXXX`, with a surrogate pair when one follows.
    private mutating func unicodeEscape() throws(ViewTreeError) -> [UInt8] {
        var scalar = try hex4()
        if (0xD800..<0xDC00).contains(scalar), bytes.count - offset >= 6, bytes[offset] == UInt8(ascii: "\\"), bytes[offset + 1] == UInt8(ascii: "u") {
            offset += 2
            let low = try hex4()
            // Only a low surrogate completes the pair (found by fuzzing: `\uDA99\uDA91`).
            guard (0xDC00..<0xE000).contains(low) else {
                throw ViewTreeError("the text is not JSON: an unpaired surrogate in a \\u escape at byte \(offset - 6)")
            }
            scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
        }
        return Array(String(Character(Unicode.Scalar(scalar) ?? "\u{FFFD}")).utf8)
    }

    private mutating func hex4() throws(ViewTreeError) -> UInt32 {
        guard bytes.count - offset >= 4, let value = UInt32(String(decoding: bytes[offset..<offset + 4], as: UTF8.self), radix: 16) else {
            throw ViewTreeError("the text is not JSON: a bad \\u escape at byte \(offset)")
        }
        offset += 4
        return value
    }
}
