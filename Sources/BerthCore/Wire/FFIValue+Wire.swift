/// Export arguments and results on the wire: a tag byte (the case), then the value.
extension FFIValue {
    package func write(to writer: inout WireWriter) {
        switch self {
        case .void: writer.u8(0)
        case .bool(let value): writer.u8(1); writer.bool(value)
        case .int8(let value): writer.u8(2); writer.integer(value)
        case .int16(let value): writer.u8(3); writer.integer(value)
        case .int32(let value): writer.u8(4); writer.integer(value)
        case .int64(let value): writer.u8(5); writer.integer(value)
        case .uint8(let value): writer.u8(6); writer.integer(value)
        case .uint16(let value): writer.u8(7); writer.integer(value)
        case .uint32(let value): writer.u8(8); writer.integer(value)
        case .uint64(let value): writer.u8(9); writer.integer(value)
        case .float(let value): writer.u8(10); writer.float(value)
        case .double(let value): writer.u8(11); writer.double(value)
        case .string(let value): writer.u8(12); writer.string(value)
        case .bytes(let value): writer.u8(13); writer.data(value)
        }
    }

    package static func read(from reader: inout WireReader) throws(WireDecodingError) -> FFIValue {
        switch try reader.u8() {
        case 0: return .void
        case 1: return .bool(try reader.bool())
        case 2: return .int8(try reader.integer())
        case 3: return .int16(try reader.integer())
        case 4: return .int32(try reader.integer())
        case 5: return .int64(try reader.integer())
        case 6: return .uint8(try reader.integer())
        case 7: return .uint16(try reader.integer())
        case 8: return .uint32(try reader.integer())
        case 9: return .uint64(try reader.integer())
        case 10: return .float(try reader.float())
        case 11: return .double(try reader.double())
        case 12: return .string(try reader.string())
        case 13: return .bytes(try reader.data())
        case let tag: throw WireDecodingError(detail: "unknown value tag \(tag)")
        }
    }
}

extension FFIError {
    package func write(to writer: inout WireWriter) {
        let tag: UInt8 = switch code {
        case .unknownSymbol: 1
        case .arity: 2
        case .badArgument: 3
        case .prepareFailed: 4
        case .pluginFailed: 5
        }
        writer.u8(tag)
        writer.string(message)
    }

    package static func read(from reader: inout WireReader) throws(WireDecodingError) -> FFIError {
        let code: Code
        switch try reader.u8() {
        case 1: code = .unknownSymbol
        case 2: code = .arity
        case 3: code = .badArgument
        case 4: code = .prepareFailed
        case 5: code = .pluginFailed
        case let tag: throw WireDecodingError(detail: "unknown export error tag \(tag)")
        }
        return FFIError(code, try reader.string())
    }
}
