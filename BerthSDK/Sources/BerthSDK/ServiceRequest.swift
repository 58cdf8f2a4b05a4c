import FoundationEssentials

/// The wire form of a contract call (berth.h, `berth_service_v1.call`):
/// `{"method":"NAME","arguments":[ARG,...]}`. Encoded once by the consumer; the provider
/// finds the method and each argument's bytes in one pass, then decodes each argument on
/// its own as the type `serve` asks for (FoundationEssentials has no raw-JSON value).
enum ServiceRequest {
    static func encode(method: String, arguments: [any Encodable]) throws -> [UInt8] {
        let encoder = JSONEncoder()
        var bytes = Array(#"{"method":"#.utf8)
        bytes += try encoder.encode(method)
        bytes += Array(#","arguments":["#.utf8)
        for (index, argument) in arguments.enumerated() {
            if index > 0 { bytes.append(UInt8(ascii: ",")) }
            bytes += try encoder.encode(argument)
        }
        bytes += Array("]}".utf8)
        return bytes
    }

    /// The method and the byte range of each argument, or a `.decode` error of one line.
    static func decode(_ bytes: [UInt8], contract: String) throws -> (method: String, arguments: [Range<Int>]) {
        var scanner = JSONSpanScanner(bytes: bytes)
        var method: String?
        var arguments: [Range<Int>] = []
        do {
            try scanner.expect(UInt8(ascii: "{"))
            while try !scanner.closes(UInt8(ascii: "}")) {
                let key = try scanner.value()
                try scanner.expect(UInt8(ascii: ":"))
                switch bytes[key] {
                case Array(#""method""#.utf8)[...]:
                    method = try JSONDecoder().decode(String.self, from: Data(bytes[try scanner.value()]))
                case Array(#""arguments""#.utf8)[...]:
                    try scanner.expect(UInt8(ascii: "["))
                    while try !scanner.closes(UInt8(ascii: "]")) { arguments.append(try scanner.value()) }
                default:
                    _ = try scanner.value()
                }
            }
        } catch {
            throw BerthError(code: .decode, message: "contract \(contract): the request is not {\"method\":NAME,\"arguments\":[...]}: \(error)")
        }
        guard let method else { throw BerthError(code: .decode, message: "contract \(contract): the request names no method") }
        return (method, arguments)
    }
}

/// Finds the extent of JSON values without decoding them.
struct JSONSpanScanner {
    struct Malformed: Error, CustomStringConvertible {
        let offset: Int
        var description: String { "malformed JSON at byte \(offset)" }
    }

    let bytes: [UInt8]
    private var offset = 0
    /// Whether the container being read has produced an element yet (for commas).
    private var started: [Bool] = []

    init(bytes: [UInt8]) { self.bytes = bytes }

    private mutating func skipSpace() {
        while offset < bytes.count, [0x20, 0x09, 0x0A, 0x0D].contains(bytes[offset]) { offset += 1 }
    }

    mutating func expect(_ byte: UInt8) throws {
        skipSpace()
        guard offset < bytes.count, bytes[offset] == byte else { throw Malformed(offset: offset) }
        offset += 1
        if byte == UInt8(ascii: "{") || byte == UInt8(ascii: "[") { started.append(false) }
    }

    /// True (and consumed) when the container ends here; else consumes the comma before a
    /// next element.
    mutating func closes(_ byte: UInt8) throws -> Bool {
        skipSpace()
        guard offset < bytes.count else { throw Malformed(offset: offset) }
        if bytes[offset] == byte {
            offset += 1
            started.removeLast()
            return true
        }
        if started.last == true {
            try expect(UInt8(ascii: ","))
        } else if !started.isEmpty {
            started[started.count - 1] = true
        }
        return false
    }

    /// The byte range of the next value (a string, number, literal, array or object).
    mutating func value() throws -> Range<Int> {
        skipSpace()
        let start = offset
        var depth = 0
        while true {
            guard offset < bytes.count else { throw Malformed(offset: offset) }
            switch bytes[offset] {
            case UInt8(ascii: "\""):
                offset += 1
                while offset < bytes.count, bytes[offset] != UInt8(ascii: "\"") {
                    offset += bytes[offset] == UInt8(ascii: "\\") ? 2 : 1
                }
                guard offset < bytes.count else { throw Malformed(offset: start) }
                offset += 1
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                depth += 1
                offset += 1
            case UInt8(ascii: "}"), UInt8(ascii: "]"):
                guard depth > 0 else { throw Malformed(offset: offset) }
                depth -= 1
                offset += 1
            default:
                guard depth == 0 else {
                    offset += 1
                    continue
                }
                // A scalar at the top of this value ends before a delimiter.
                while offset < bytes.count, !Self.delimiters.contains(bytes[offset]) { offset += 1 }
                guard offset > start else { throw Malformed(offset: offset) }
            }
            if depth == 0 { return start..<offset }
        }
    }

    private static let delimiters: Set<UInt8> = [UInt8(ascii: ","), UInt8(ascii: "]"), UInt8(ascii: "}"), UInt8(ascii: ":"), 0x20, 0x09, 0x0A, 0x0D]
}
