@_spi(Engine) import BerthCore
/// What an `ExportCallSite` holds: its generation (a call after the generation ends
/// throws) and either the export's prepared libffi function (in process) or slots of its
/// own whose values go to the worker (isolated).
@MainActor @usableFromInline
final class ExportBinding {
    /// Bytes per argument slot, as `ForeignFunction` lays them out.
    @inlinable nonisolated static var slotBytes: Int { 16 }

    let generation: PluginGeneration
    let signature: ExportSignature
    private let function: ForeignFunction?
    /// Isolated only: where the site writes arguments and where the result is read.
    /// `nonisolated(unsafe)`: written once in init, freed in deinit, used on the main actor.
    private nonisolated(unsafe) let ownSlots: UnsafeMutableRawPointer?
    private nonisolated(unsafe) let ownResult: UnsafeMutableRawPointer?

    init(generation: PluginGeneration, signature: ExportSignature, function: ForeignFunction?) {
        self.generation = generation
        self.signature = signature
        self.function = function
        if function == nil {
            ownSlots = .allocate(byteCount: max(1, signature.params.count) * Self.slotBytes, alignment: 16)
            ownResult = .allocate(byteCount: Self.slotBytes, alignment: 16)
        } else {
            ownSlots = nil
            ownResult = nil
        }
    }

    deinit {
        ownSlots?.deallocate()
        ownResult?.deallocate()
    }

    /// Where the next call's arguments go, once the generation is known to be loaded.
    @usableFromInline
    func argumentSlots() throws(FFIError) -> UnsafeMutableRawPointer {
        guard generation.isLoaded else {
            throw FFIError(.unknownSymbol, "\(generation.pluginID)#\(generation.number) is \(generation.state.rawValue); bind \(signature.symbol) again")
        }
        if let function { return function.argumentSlots }
        guard let ownSlots else { preconditionFailure("an isolated binding has its own slots") }
        return ownSlots
    }

    /// Calls with the arguments in the slots; returns where the result is.
    @usableFromInline
    func invoke() throws(FFIError) -> UnsafeRawPointer {
        if let function { return UnsafeRawPointer(function.invokePrepared()) }
        guard let ownSlots, let ownResult else { preconditionFailure("an isolated binding has its own slots") }
        var arguments: [FFIValue] = []
        arguments.reserveCapacity(signature.params.count)
        for (index, type) in signature.params.enumerated() {
            arguments.append(FFIValue.loadScalar(from: ownSlots + index * Self.slotBytes, as: type))
        }
        let value = try generation.call(signature.symbol, arguments: arguments)
        value.storeScalar(into: ownResult)
        return UnsafeRawPointer(ownResult)
    }
}

extension FFIValue {
    /// A scalar read from an argument or result slot (only the site's own types reach here).
    static func loadScalar(from slot: UnsafeRawPointer, as type: ValueType) -> FFIValue {
        switch type {
        case .void: .void
        case .bool: .bool(Bool.loadResult(from: slot))
        case .int8: .int8(Int8.loadResult(from: slot))
        case .int16: .int16(Int16.loadResult(from: slot))
        case .int32: .int32(Int32.loadResult(from: slot))
        case .int64: .int64(Int64.loadResult(from: slot))
        case .uint8: .uint8(UInt8.loadResult(from: slot))
        case .uint16: .uint16(UInt16.loadResult(from: slot))
        case .uint32: .uint32(UInt32.loadResult(from: slot))
        case .uint64: .uint64(UInt64.loadResult(from: slot))
        case .float: .float(Float.loadResult(from: slot))
        case .double: .double(Double.loadResult(from: slot))
        case .string, .bytes: preconditionFailure("a typed call site has no \(type.rawValue) slots")
        }
    }

    /// Writes a scalar where a typed site reads its result.
    func storeScalar(into slot: UnsafeMutableRawPointer) {
        switch self {
        case .void: break
        case .bool(let value): value.storeArgument(into: slot)
        case .int8(let value): value.storeArgument(into: slot)
        case .int16(let value): value.storeArgument(into: slot)
        case .int32(let value): value.storeArgument(into: slot)
        case .int64(let value): value.storeArgument(into: slot)
        case .uint8(let value): value.storeArgument(into: slot)
        case .uint16(let value): value.storeArgument(into: slot)
        case .uint32(let value): value.storeArgument(into: slot)
        case .uint64(let value): value.storeArgument(into: slot)
        case .float(let value): value.storeArgument(into: slot)
        case .double(let value): value.storeArgument(into: slot)
        case .string, .bytes: preconditionFailure("a typed call site has no \(type.rawValue) result")
        }
    }
}
