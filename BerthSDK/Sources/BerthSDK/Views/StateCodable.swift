import FoundationEssentials
import Synchronization

/// A value `@State` and `@Persisted` can keep in the host: bytes plus a type fingerprint.
/// A slot whose stored fingerprint differs (the type changed) starts from its default.
///
/// Int, Int64, Double, Bool and String have compact encodings; arrays and dictionaries of
/// `Codable` values are JSON as they are; any other `Codable` type gets a JSON one by
/// declaring `extension MyType: StateCodable {}`.
public protocol StateCodable {
    /// Identifies the type across builds (a hash of its name by default).
    static var stateFingerprint: UInt64 { get }
    var stateBytes: [UInt8] { get }
    init?(stateBytes: [UInt8])
}

extension StateCodable {
    /// A hash of the type's full name, the same in every build.
    public static var stateFingerprint: UInt64 { Fingerprint.of(type: Self.self) }
}

extension StateCodable where Self: Codable {
    /// The value as JSON with sorted keys; empty if encoding fails.
    public var stateBytes: [UInt8] { (try? Array(StableJSON.encoder.encode(self))) ?? [] }
    /// Decodes the JSON bytes; `nil` if they do not decode.
    public init?(stateBytes: [UInt8]) {
        guard let value = try? JSONDecoder().decode(Self.self, from: Data(stateBytes)) else { return nil }
        self = value
    }
}

extension Int: StateCodable {
    /// Eight bytes, little-endian (stored as `Int64`).
    public var stateBytes: [UInt8] { withUnsafeBytes(of: Int64(self).littleEndian, Array.init) }
    /// Reads eight little-endian bytes; `nil` for any other length.
    public init?(stateBytes: [UInt8]) {
        guard stateBytes.count == 8 else { return nil }
        self = Int(Int64(littleEndian: stateBytes.withUnsafeBytes { $0.loadUnaligned(as: Int64.self) }))
    }
}

extension Int64: StateCodable {
    /// Eight bytes, little-endian.
    public var stateBytes: [UInt8] { withUnsafeBytes(of: littleEndian, Array.init) }
    /// Reads eight little-endian bytes; `nil` for any other length.
    public init?(stateBytes: [UInt8]) {
        guard stateBytes.count == 8 else { return nil }
        self = Int64(littleEndian: stateBytes.withUnsafeBytes { $0.loadUnaligned(as: Int64.self) })
    }
}

extension Double: StateCodable {
    /// The bit pattern, eight bytes, little-endian.
    public var stateBytes: [UInt8] { withUnsafeBytes(of: bitPattern.littleEndian, Array.init) }
    /// Reads an eight-byte little-endian bit pattern; `nil` for any other length.
    public init?(stateBytes: [UInt8]) {
        guard stateBytes.count == 8 else { return nil }
        self = Double(bitPattern: UInt64(littleEndian: stateBytes.withUnsafeBytes { $0.loadUnaligned(as: UInt64.self) }))
    }
}

extension Bool: StateCodable {
    /// One byte: 1 for true, 0 for false.
    public var stateBytes: [UInt8] { [self ? 1 : 0] }
    /// Reads one byte, nonzero meaning true; `nil` for any other length.
    public init?(stateBytes: [UInt8]) {
        guard stateBytes.count == 1 else { return nil }
        self = stateBytes[0] != 0
    }
}

extension String: StateCodable {
    /// The UTF-8 bytes.
    public var stateBytes: [UInt8] { Array(utf8) }
    /// Decodes UTF-8, replacing invalid bytes.
    public init?(stateBytes: [UInt8]) {
        self = String(decoding: stateBytes, as: UTF8.self)
    }
}

/// Arrays and dictionaries of `Codable` values are kept as they are (`@Persisted("tasks")
/// var tasks: [TaskItem] = []`), as JSON like any other `Codable` value.
extension Array: StateCodable where Element: Codable {}

extension Dictionary: StateCodable where Key: Codable, Value: Codable {}

/// FNV-1a, 64 bit: stable across processes and builds (Swift's `hashValue` is seeded).
enum Fingerprint {
    /// Each type's fingerprint, computed once: naming a type walks its metadata and costs
    /// far more than a render pass can spend per `@State`. `_typeName` names it as
    /// `String(reflecting:)` does, without that call's conformance scans. A list, not a
    /// `Dictionary`: a plugin has a handful of state types, and a fresh image's first
    /// dictionary of a key type costs a conformance scan (see `ViewTypes`).
    private static let byType = Mutex<[(type: ObjectIdentifier, fingerprint: UInt64)]>([])

    static func of<T>(type: T.Type) -> UInt64 {
        let key = ObjectIdentifier(type)
        if let known = byType.withLock({ $0.first { $0.type == key } }) { return known.fingerprint }
        let fingerprint = of(_typeName(type, qualified: true))
        byType.withLock { $0.append((key, fingerprint)) }
        return fingerprint
    }

    static func of(_ text: String) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in text.utf8 {
            hash ^= UInt64(byte)
            hash &*= 0x0000_0100_0000_01b3
        }
        return hash
    }
}

/// JSON with sorted keys: the same value always gives the same bytes (payloads compare and
/// log predictably; JSONEncoder's default key order is not stable across runs).
enum StableJSON {
    static var encoder: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return encoder
    }
}
