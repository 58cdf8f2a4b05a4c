package import CBerth

/// A `berth_status` and the message that came with it: what every reply carries for a
/// call that can fail (the plugin's or the host's `berth_error` text).
package struct IsolationStatus: Sendable, Equatable, CustomStringConvertible {
    /// `BERTH_OK` or a `BERTH_ERR_*` code.
    package var code: Int32
    /// The failure message; empty on success.
    package var message: String

    /// A status with its message.
    package init(code: Int32, message: String = "") {
        self.code = code
        self.message = message
    }

    /// `BERTH_OK`, no message.
    package static let ok = IsolationStatus(code: Int32(BERTH_OK))

    /// True for `BERTH_OK`.
    package var isOK: Bool { code == Int32(BERTH_OK) }

    /// A failure with `BERTH_ERR_*` `code`.
    package static func failure(_ code: Int, _ message: String) -> IsolationStatus {
        IsolationStatus(code: Int32(code), message: message)
    }

    package var description: String { isOK ? "ok" : "status \(code): \(message)" }

    package func write(to writer: inout WireWriter) {
        writer.i32(code)
        writer.string(message)
    }

    package static func read(from reader: inout WireReader) throws(WireDecodingError) -> IsolationStatus {
        IsolationStatus(code: try reader.i32(), message: try reader.string())
    }
}
