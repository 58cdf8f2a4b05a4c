/// A C value type an export may take or return, as named in a manifest.
///
/// `string` is a NUL-terminated UTF-8 `const char *`. `bytes` is a pointer + length: as a
/// parameter it is two C arguments (`const uint8_t *`, `uint64_t`); as a result it is a
/// `berth_bytes` struct returned by value.
public enum ValueType: String, Sendable, CaseIterable, Codable {
    /// No value (results only); a C `bool`.
    case void, bool
    /// Signed integers of that width.
    case int8, int16, int32, int64
    /// Unsigned integers of that width.
    case uint8, uint16, uint32, uint64
    /// C `float` and `double`.
    case float, double
    /// A NUL-terminated UTF-8 string; bytes as pointer and length.
    case string, bytes

    /// The types a parameter may have (everything but `void`).
    package static var parameterTypes: [ValueType] { allCases.filter { $0 != .void } }
}

/// One C function a plugin exports for the host to call through libffi.
package struct ExportSignature: Sendable, Equatable, Codable {
    /// The symbol in the library's dynamic symbol table.
    package var symbol: String
    /// Parameter types, in order.
    package var params: [ValueType]
    /// Result type.
    package var returns: ValueType

    /// The signature of `symbol`: its parameter types in order and its result type.
    package init(symbol: String, params: [ValueType], returns: ValueType) {
        self.symbol = symbol
        self.params = params
        self.returns = returns
    }

    /// `int32 greeter_add(int32, int32)`: the signature as a user reads it.
    package var description: String {
        "\(returns.rawValue) \(symbol)(\(params.map(\.rawValue).joined(separator: ", ")))"
    }
}
