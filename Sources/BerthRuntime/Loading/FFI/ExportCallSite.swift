@_spi(Engine) import BerthCore
/// One manifest export bound once to Swift types, for calls in a tight loop: each call
/// writes its arguments into the export's prepared libffi slots and runs `ffi_call` on the
/// interface prepared at load time. No `FFIValue`, no array, no allocation per call.
///
/// ```swift
/// let add = try generation.exportCallSite("greeter_add", arguments: Int32.self, Int32.self, returning: Int32.self)
/// let sum = try add(2, 40)
/// ```
///
/// A site belongs to its generation: after the generation ends (unload, reload) a call
/// throws instead of reaching code that is gone; bind again on the new generation. In an
/// isolated plugin the site works the same and each call is a round trip to the worker.
@MainActor
@_spi(Engine) public final class ExportCallSite<Result: ExportScalar, each Argument: ExportScalar> {
    @usableFromInline let binding: ExportBinding

    init(binding: ExportBinding) {
        self.binding = binding
    }

    /// The export's signature, as the manifest declares it.
    package var signature: ExportSignature { binding.signature }

    /// Calls the export. Throws when the generation has ended (or, isolated, when the
    /// worker fails).
    @inlinable @inline(__always)
    @_spi(Engine) public func callAsFunction(_ argument: repeat each Argument) throws(FFIError) -> Result {
        let slots = try binding.argumentSlots()
        var offset = 0
        // A pack expansion, not `for value in repeat each argument`: the loop form copied each
        // value through its type's value witnesses even when specialized.
        repeat Self.store(each argument, into: slots, at: &offset)
        return Result.loadResult(from: try binding.invoke())
    }

    @inlinable @inline(__always)
    static func store<Value: ExportScalar>(_ value: Value, into slots: UnsafeMutableRawPointer, at offset: inout Int) {
        value.storeArgument(into: slots + offset)
        offset &+= ExportBinding.slotBytes
    }
}

extension PluginGeneration {
    /// Binds `symbol` to Swift types for typed calls (see `ExportCallSite`). The types must
    /// be the manifest's, in order; strings and bytes are not accepted (use `call`).
    @_spi(Engine) public func exportCallSite<Result: ExportScalar, each Argument: ExportScalar>(
        _ symbol: String, arguments: repeat (each Argument).Type, returning result: Result.Type
    ) throws(FFIError) -> ExportCallSite<Result, repeat each Argument> {
        var types: [ValueType] = []
        for type in repeat each arguments { types.append(type.exportType) }
        guard isLoaded else {
            throw FFIError(.unknownSymbol, "\(pluginID)#\(number) is \(state.rawValue); nothing is called")
        }
        guard let signature = manifest.export(named: symbol) else {
            let known = manifest.exports.map(\.symbol).joined(separator: ", ")
            throw FFIError(.unknownSymbol, "\(pluginID) has no export '\(symbol)' (exports: \(known.isEmpty ? "none" : known))")
        }
        let bound = ExportSignature(symbol: symbol, params: types, returns: Result.exportType)
        guard bound == signature else {
            throw FFIError(.badArgument, "\(pluginID) declares \(signature.description); bound as \(bound.description)")
        }
        return ExportCallSite(binding: ExportBinding(generation: self, signature: signature, function: connection.exportFunction(symbol)))
    }
}
