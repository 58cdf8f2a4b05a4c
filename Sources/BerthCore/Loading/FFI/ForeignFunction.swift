package import CBerth
private import CFFI

/// A C function described by a manifest export, with its libffi call interface prepared
/// once at load time and reused for every call.
///
/// `bytes` parameters become two C arguments (`const uint8_t *`, `uint64_t`); a `bytes`
/// result is a `berth_bytes` returned by value, described to libffi as a struct.
package final class ForeignFunction {
    /// Bytes per argument slot (`ExportBinding.slotBytes` says the same, inlinable).
    package static let slotBytes = 16

    package let signature: ExportSignature
    private let address: UnsafeMutableRawPointer
    private let cif: UnsafeMutablePointer<ffi_cif>
    private let argumentTypes: UnsafeMutablePointer<UnsafeMutablePointer<ffi_type>?>
    private let argumentCount: Int
    /// The `berth_bytes` struct type (elements: pointer, uint64, NULL terminator).
    private let bytesType: UnsafeMutablePointer<ffi_type>
    private let bytesElements: UnsafeMutablePointer<UnsafeMutablePointer<ffi_type>?>
    /// One 16-byte slot per C argument and the pointer array libffi reads, made once: a
    /// call writes its values in place instead of allocating (calls run on the main actor,
    /// one at a time, so one set is enough).
    private let slots: UnsafeMutableRawPointer
    private let slotPointers: UnsafeMutablePointer<UnsafeMutableRawPointer?>
    private let result: UnsafeMutableRawPointer

    /// Everything above lives in this one allocation (a load prepares one interface per
    /// export, so a reload made seven allocations per export before).
    private let block: UnsafeMutableRawPointer

    package init(signature: ExportSignature, address: UnsafeMutableRawPointer) throws(FFIError) {
        self.signature = signature
        self.address = address

        var count = 0
        for param in signature.params { count += param == .bytes ? 2 : 1 }
        argumentCount = count
        let layout = Layout(arguments: count)
        block = .allocate(byteCount: layout.bytes, alignment: 16)
        cif = (block + layout.cif).bindMemory(to: ffi_cif.self, capacity: 1)
        cif.initialize(to: ffi_cif())
        bytesType = (block + layout.bytesType).bindMemory(to: ffi_type.self, capacity: 1)
        bytesElements = (block + layout.bytesElements).bindMemory(to: UnsafeMutablePointer<ffi_type>?.self, capacity: 3)
        argumentTypes = (block + layout.argumentTypes).bindMemory(to: UnsafeMutablePointer<ffi_type>?.self, capacity: layout.pointers)
        slotPointers = (block + layout.slotPointers).bindMemory(to: UnsafeMutableRawPointer?.self, capacity: layout.pointers)
        result = block + layout.result
        slots = block + layout.slots

        bytesElements[0] = berth_ffi_type_pointer()
        bytesElements[1] = berth_ffi_type_uint64()
        bytesElements[2] = nil
        bytesType.initialize(to: ffi_type())
        bytesType.pointee.type = UInt16(FFI_TYPE_STRUCT)
        bytesType.pointee.elements = bytesElements
        var index = 0
        for param in signature.params {
            if param == .bytes {
                argumentTypes[index] = berth_ffi_type_pointer()
                argumentTypes[index + 1] = berth_ffi_type_uint64()
                index += 2
            } else {
                argumentTypes[index] = Self.scalarType(param)
                index += 1
            }
        }
        for index in 0..<count { slotPointers[index] = slots + index * ForeignFunction.slotBytes }
        let returnType = signature.returns == .bytes ? bytesType : Self.scalarType(signature.returns)
        let status = ffi_prep_cif(cif, berth_ffi_default_abi(), UInt32(count), returnType, argumentTypes)
        guard status == FFI_OK else {
            block.deallocate()
            throw FFIError(.prepareFailed, "ffi_prep_cif failed for \(signature.description) (status \(status.rawValue))")
        }
    }

    deinit {
        block.deallocate()
    }

    /// Where each part sits in the block, 16-byte aligned: the interface, the `berth_bytes`
    /// type and its elements, the argument types, the argument pointers, the result, the slots.
    private struct Layout {
        let cif = 0
        let bytesType: Int
        let bytesElements: Int
        let argumentTypes: Int
        let slotPointers: Int
        let result: Int
        let slots: Int
        let bytes: Int
        let pointers: Int

        init(arguments: Int) {
            func rounded(_ size: Int) -> Int { (size + 15) & ~15 }
            pointers = max(1, arguments)
            bytesType = rounded(MemoryLayout<ffi_cif>.stride)
            bytesElements = bytesType + rounded(MemoryLayout<ffi_type>.stride)
            argumentTypes = bytesElements + rounded(3 * MemoryLayout<UnsafeRawPointer>.stride)
            slotPointers = argumentTypes + rounded(pointers * MemoryLayout<UnsafeRawPointer>.stride)
            result = slotPointers + rounded(pointers * MemoryLayout<UnsafeRawPointer>.stride)
            slots = result + 16
            bytes = slots + pointers * ForeignFunction.slotBytes
        }
    }

    /// Calls the function. The argument types must match the signature (checked here, so a
    /// mismatch throws before anything is called). Strings and bytes the function returns
    /// are copied before this returns.
    package func call(_ arguments: [FFIValue]) throws(FFIError) -> FFIValue {
        guard arguments.count == signature.params.count else {
            throw FFIError(.arity, "\(signature.symbol) takes \(signature.params.count) argument(s), got \(arguments.count)")
        }
        for (index, (argument, type)) in zip(arguments, signature.params).enumerated() where argument.type != type {
            throw FFIError(.badArgument, "argument \(index + 1) of \(signature.symbol) must be \(type.rawValue), got \(argument.type.rawValue)")
        }
        var storage = ArgumentStorage(slots: slots)
        defer { storage.deallocate() }
        for argument in arguments {
            storage.append(argument)
        }
        return Self.readResult(invokePrepared(), as: signature.returns)
    }

    /// Where the arguments of the next call go: one 16-byte slot per C argument.
    package var argumentSlots: UnsafeMutableRawPointer { slots }

    /// Calls with whatever the slots hold; returns where libffi wrote the result (valid
    /// until the next call). The typed path (`ExportCallSite`) and `call` both end here.
    package func invokePrepared() -> UnsafeMutableRawPointer {
        // Large enough for any scalar widened to ffi_arg and for berth_bytes.
        result.storeBytes(of: (UInt64(0), UInt64(0)), as: (UInt64, UInt64).self)
        let function = unsafeBitCast(address, to: (@convention(c) () -> Void).self)
        ffi_call(cif, function, result, slotPointers)
        return result
    }

    // MARK: Types

    private static func scalarType(_ type: ValueType) -> UnsafeMutablePointer<ffi_type> {
        switch type {
        case .void: berth_ffi_type_void()
        case .bool, .uint8: berth_ffi_type_uint8()
        case .int8: berth_ffi_type_sint8()
        case .int16: berth_ffi_type_sint16()
        case .uint16: berth_ffi_type_uint16()
        case .int32: berth_ffi_type_sint32()
        case .uint32: berth_ffi_type_uint32()
        case .int64: berth_ffi_type_sint64()
        case .uint64: berth_ffi_type_uint64()
        case .float: berth_ffi_type_float()
        case .double: berth_ffi_type_double()
        case .string, .bytes: berth_ffi_type_pointer()
        }
    }

    /// libffi widens integer results narrower than a register to `ffi_arg`; on the
    /// little-endian targets Berth supports the value is in the low bytes.
    private static func readResult(_ result: UnsafeMutableRawPointer, as type: ValueType) -> FFIValue {
        switch type {
        case .void: return .void
        case .bool: return .bool(result.load(as: UInt8.self) != 0)
        case .int8: return .int8(result.load(as: Int8.self))
        case .int16: return .int16(result.load(as: Int16.self))
        case .int32: return .int32(result.load(as: Int32.self))
        case .int64: return .int64(result.load(as: Int64.self))
        case .uint8: return .uint8(result.load(as: UInt8.self))
        case .uint16: return .uint16(result.load(as: UInt16.self))
        case .uint32: return .uint32(result.load(as: UInt32.self))
        case .uint64: return .uint64(result.load(as: UInt64.self))
        case .float: return .float(result.load(as: Float.self))
        case .double: return .double(result.load(as: Double.self))
        case .string:
            guard let text = result.load(as: UnsafePointer<CChar>?.self) else { return .string("") }
            return .string(String(cString: text))
        case .bytes:
            let bytes = result.load(as: berth_bytes.self)
            guard let data = bytes.data, bytes.length > 0 else { return .bytes([]) }
            return .bytes(Array(UnsafeBufferPointer(start: data, count: Int(bytes.length))))
        }
    }

}

/// Writes one call's arguments into the function's preallocated slots. Only strings and
/// bytes need memory of their own (their copies), freed when the call returns.
private struct ArgumentStorage {
    private let slots: UnsafeMutableRawPointer
    private var count = 0
    private var copies: [UnsafeMutableRawPointer] = []

    init(slots: UnsafeMutableRawPointer) {
        self.slots = slots
    }

    mutating func append(_ value: FFIValue) {
        switch value {
        case .void: break
        case .bool(let value): push(UInt8(value ? 1 : 0))
        case .int8(let value): push(value)
        case .int16(let value): push(value)
        case .int32(let value): push(value)
        case .int64(let value): push(value)
        case .uint8(let value): push(value)
        case .uint16(let value): push(value)
        case .uint32(let value): push(value)
        case .uint64(let value): push(value)
        case .float(let value): push(value)
        case .double(let value): push(value)
        case .string(let text):
            push(copy(Array(text.utf8) + [0]))
        case .bytes(let bytes):
            push(copy(bytes))
            push(UInt64(bytes.count))
        }
    }

    /// Copies bytes to memory that lives until the call returns.
    private mutating func copy(_ bytes: [UInt8]) -> UnsafeMutableRawPointer {
        let memory = UnsafeMutableRawPointer.allocate(byteCount: max(1, bytes.count), alignment: 8)
        bytes.withUnsafeBytes { source in
            if let base = source.baseAddress { memory.copyMemory(from: base, byteCount: source.count) }
        }
        copies.append(memory)
        return memory
    }

    private mutating func push<T>(_ value: T) {
        (slots + count * ForeignFunction.slotBytes).storeBytes(of: value, as: T.self)
        count += 1
    }

    func deallocate() {
        for copy in copies { copy.deallocate() }
    }
}
