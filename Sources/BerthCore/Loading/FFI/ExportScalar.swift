/// A Swift type an export takes or returns by value through a typed call site
/// (`ExportCallSite`), written straight into libffi's argument slots: no `FFIValue`, no
/// allocation. Strings and bytes are not scalars; they go through `PluginGeneration.call`.
public protocol ExportScalar {
    /// The manifest type this Swift type stands for.
    static var exportType: ValueType { get }
    /// Writes the value where libffi reads the argument.
    func storeArgument(into slot: UnsafeMutableRawPointer)
    /// Reads a result libffi wrote. Integers narrower than a register are widened to
    /// `ffi_arg`; on the little-endian targets Berth supports the value is in the low bytes.
    static func loadResult(from slot: UnsafeRawPointer) -> Self
}

/// The result of an export that returns `void`.
public struct ExportVoid: ExportScalar, Sendable, Equatable {
    /// The void value.
    public init() {}
    /// `ValueType.void`.
    public static var exportType: ValueType { .void }
    /// Writes nothing: `void` is never an argument.
    @inlinable public func storeArgument(into slot: UnsafeMutableRawPointer) {}
    /// Reads nothing: a `void` export returns no value.
    @inlinable public static func loadResult(from slot: UnsafeRawPointer) -> ExportVoid { ExportVoid() }
}

extension Bool: ExportScalar {
    public static var exportType: ValueType { .bool }
    @inlinable public func storeArgument(into slot: UnsafeMutableRawPointer) { slot.storeBytes(of: self ? 1 : 0, as: UInt8.self) }
    @inlinable public static func loadResult(from slot: UnsafeRawPointer) -> Bool { slot.load(as: UInt8.self) != 0 }
}

/// The numeric scalars: stored and loaded as themselves.
public protocol ExportNumber: ExportScalar {}

extension ExportNumber {
    /// Writes the number's own bytes into the argument slot.
    @inlinable public func storeArgument(into slot: UnsafeMutableRawPointer) { slot.storeBytes(of: self, as: Self.self) }
    /// Reads the number from the result slot.
    @inlinable public static func loadResult(from slot: UnsafeRawPointer) -> Self { slot.load(as: Self.self) }
}

extension Int8: ExportNumber { public static var exportType: ValueType { .int8 } }
extension Int16: ExportNumber { public static var exportType: ValueType { .int16 } }
extension Int32: ExportNumber { public static var exportType: ValueType { .int32 } }
extension Int64: ExportNumber { public static var exportType: ValueType { .int64 } }
extension UInt8: ExportNumber { public static var exportType: ValueType { .uint8 } }
extension UInt16: ExportNumber { public static var exportType: ValueType { .uint16 } }
extension UInt32: ExportNumber { public static var exportType: ValueType { .uint32 } }
extension UInt64: ExportNumber { public static var exportType: ValueType { .uint64 } }
extension Float: ExportNumber { public static var exportType: ValueType { .float } }
extension Double: ExportNumber { public static var exportType: ValueType { .double } }
