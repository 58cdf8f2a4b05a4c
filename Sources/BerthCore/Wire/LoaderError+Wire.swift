/// A failed hello on the wire: the loader error the worker hit, every field of it, so the
/// host rebuilds the same error (its message is derived from the fields).
extension LoaderError {
    package func write(to writer: inout WireWriter) {
        writer.string(code.rawValue)
        writer.string(plugin)
        for field in [path, symbol, systemError, detail] {
            writer.bool(field != nil)
            writer.string(field ?? "")
        }
    }

    package static func read(from reader: inout WireReader) throws(WireDecodingError) -> LoaderError {
        let codeName = try reader.string()
        let plugin = try reader.string()
        var fields: [String?] = []
        for _ in 0..<4 {
            let present = try reader.bool()
            let text = try reader.string()
            fields.append(present ? text : nil)
        }
        return LoaderError(Code(rawValue: codeName) ?? .handshakeFailed, plugin: plugin, path: fields[0], symbol: fields[1],
                           systemError: fields[2], detail: fields[3])
    }
}
