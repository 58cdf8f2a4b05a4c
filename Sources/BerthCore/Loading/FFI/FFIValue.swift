/// A value passed to or returned from an export called through libffi.
public enum FFIValue: Sendable, Equatable, CustomStringConvertible {
    /// No value (a `void` result).
    case void
    /// A `bool`.
    case bool(Bool)
    /// A signed integer of the manifest's width.
    case int8(Int8), int16(Int16), int32(Int32), int64(Int64)
    /// An unsigned integer of the manifest's width.
    case uint8(UInt8), uint16(UInt16), uint32(UInt32), uint64(UInt64)
    /// A floating-point number.
    case float(Float), double(Double)
    /// A NUL-terminated UTF-8 string.
    case string(String)
    /// Bytes passed as pointer and length.
    case bytes([UInt8])

    /// The manifest type of this value.
    public var type: ValueType {
        switch self {
        case .void: .void
        case .bool: .bool
        case .int8: .int8
        case .int16: .int16
        case .int32: .int32
        case .int64: .int64
        case .uint8: .uint8
        case .uint16: .uint16
        case .uint32: .uint32
        case .uint64: .uint64
        case .float: .float
        case .double: .double
        case .string: .string
        case .bytes: .bytes
        }
    }

    /// Human form: numbers in decimal, strings as they are, bytes as `hex:…` (which
    /// `parse` reads back).
    public var description: String {
        switch self {
        case .void: ""
        case .bool(let value): "\(value)"
        case .int8(let value): "\(value)"
        case .int16(let value): "\(value)"
        case .int32(let value): "\(value)"
        case .int64(let value): "\(value)"
        case .uint8(let value): "\(value)"
        case .uint16(let value): "\(value)"
        case .uint32(let value): "\(value)"
        case .uint64(let value): "\(value)"
        case .float(let value): "\(value)"
        case .double(let value): "\(value)"
        case .string(let value): value
        case .bytes(let value): "hex:" + value.map { byte in
            let digits = String(byte, radix: 16)
            return digits.count == 1 ? "0" + digits : digits
        }.joined()
        }
    }

    /// Parses command-line text as a value of `type`.
    ///
    /// Integers are decimal (or `0x` hex) and must fit the type; `bool` is true/false/1/0;
    /// `bytes` is `hex:0a0b…` or else the text's UTF-8. Errors say what was expected.
    public static func parse(_ text: String, as type: ValueType) throws(FFIError) -> FFIValue {
        switch type {
        case .void: throw FFIError(.badArgument, "void is not a parameter type")
        case .bool:
            switch text.lowercased() {
            case "true", "1": return .bool(true)
            case "false", "0": return .bool(false)
            default: throw FFIError(.badArgument, "'\(text)' is not a bool (true, false, 1 or 0)")
            }
        case .int8: return .int8(try integer(text, type))
        case .int16: return .int16(try integer(text, type))
        case .int32: return .int32(try integer(text, type))
        case .int64: return .int64(try integer(text, type))
        case .uint8: return .uint8(try integer(text, type))
        case .uint16: return .uint16(try integer(text, type))
        case .uint32: return .uint32(try integer(text, type))
        case .uint64: return .uint64(try integer(text, type))
        case .float:
            guard let value = Float(text) else { throw FFIError(.badArgument, "'\(text)' is not a float") }
            guard value.isFinite || !Double(text)!.isFinite else {
                throw FFIError(.badArgument, "'\(text)' overflows float (largest \(Float.greatestFiniteMagnitude))")
            }
            return .float(value)
        case .double:
            guard let value = Double(text) else { throw FFIError(.badArgument, "'\(text)' is not a double") }
            guard value.isFinite || ["inf", "-inf", "+inf", "infinity", "-infinity", "+infinity", "nan"].contains(text.lowercased()) else {
                throw FFIError(.badArgument, "'\(text)' overflows double")
            }
            return .double(value)
        case .string:
            guard !text.utf8.contains(0) else { throw FFIError(.badArgument, "a string argument cannot contain NUL") }
            return .string(text)
        case .bytes:
            guard text.hasPrefix("hex:") else { return .bytes(Array(text.utf8)) }
            return .bytes(try hexBytes(String(text.dropFirst(4))))
        }
    }

    private static func integer<T: FixedWidthInteger>(_ text: String, _ type: ValueType) throws(FFIError) -> T {
        let negative = text.hasPrefix("-")
        let unsigned = negative || text.hasPrefix("+") ? String(text.dropFirst()) : text
        let isHex = unsigned.lowercased().hasPrefix("0x")
        let digits = isHex ? String(unsigned.dropFirst(2)) : unsigned
        let radix = isHex ? 16 : 10
        guard !digits.isEmpty, digits.allSatisfy({ $0.isASCII && $0.isHexDigit && (radix == 16 || $0.isNumber) }) else {
            throw FFIError(.badArgument, "'\(text)' is not an integer")
        }
        guard let value = T((negative ? "-" : "") + digits, radix: radix) else {
            throw FFIError(.badArgument, "'\(text)' overflows \(type.rawValue) (\(T.min)...\(T.max))")
        }
        return value
    }

    private static func hexBytes(_ digits: String) throws(FFIError) -> [UInt8] {
        let characters = Array(digits)
        guard characters.count % 2 == 0 else { throw FFIError(.badArgument, "hex:\(digits) has an odd number of digits") }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(characters.count / 2)
        var index = 0
        while index < characters.count {
            guard let byte = UInt8(String(characters[index...index + 1]), radix: 16) else {
                throw FFIError(.badArgument, "hex:\(digits) is not hexadecimal")
            }
            bytes.append(byte)
            index += 2
        }
        return bytes
    }
}

extension ExportSignature {
    /// Parses command-line text as this export's arguments: checks the count, then each
    /// value against its parameter type. Errors name the export and the argument.
    package func parseArguments(_ texts: [String]) throws(FFIError) -> [FFIValue] {
        guard texts.count == params.count else {
            throw FFIError(.arity, "\(symbol) takes \(params.count) argument(s) (\(description)), got \(texts.count)")
        }
        var values: [FFIValue] = []
        values.reserveCapacity(texts.count)
        for (index, (text, type)) in zip(texts, params).enumerated() {
            do {
                values.append(try FFIValue.parse(text, as: type))
            } catch {
                throw FFIError(.badArgument, "argument \(index + 1) of \(symbol): \(error.message)")
            }
        }
        return values
    }
}

/// Why an export call was refused or failed. Nothing was called when this is thrown before
/// the call.
public struct FFIError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What went wrong: an unknown symbol, the wrong number of arguments, an argument of the wrong type or text, libffi refusing the signature, or the plugin failing during the call.
    public enum Code: Sendable, Equatable {
        /// The manifest declares no export of that name; the wrong number of arguments; an argument of the wrong type or unreadable text; libffi refused the signature.
        case unknownSymbol, arity, badArgument, prepareFailed
        /// The plugin's worker process died or stopped answering during the call.
        case pluginFailed
    }

    /// What went wrong.
    public var code: Code
    /// The explanation a user reads (the symbol and the argument involved).
    public var message: String

    /// An error with `code`, explained by `message`.
    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    /// The message.
    public var description: String { message }
}
