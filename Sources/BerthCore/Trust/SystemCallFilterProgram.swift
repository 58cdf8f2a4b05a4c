/// The worker's system-call filter as the host built it (Docs/worker-sandbox.md): libseccomp's
/// BPF program of the policy table, its pid left out. It travels in the hello's sandbox
/// policy; the worker writes its own pid into `selfSlots` and loads it, so no worker opens
/// libseccomp to confine itself. `package`: the host builds it, the worker loads it.
package struct SystemCallFilterProgram: Sendable, Equatable {
    /// One word per BPF instruction: code, jt << 16, jf << 24, k << 32.
    package var instructions: [UInt64]
    /// The instructions whose constant is the worker's own pid (the table's "self" rows).
    package var selfSlots: [UInt32]
    /// Whether refused calls trap (SIGSYS, reported as `denied`) rather than return EPERM.
    package var trapped: Bool

    package init(instructions: [UInt64], selfSlots: [UInt32], trapped: Bool) {
        self.instructions = instructions
        self.selfSlots = selfSlots
        self.trapped = trapped
    }

    /// `instructions` with `pid` in every slot: what the kernel is given.
    package func program(for pid: Int32) -> [UInt64] {
        var filled = instructions
        for slot in selfSlots where Int(slot) < filled.count {
            filled[Int(slot)] = filled[Int(slot)] & 0xffff_ffff | UInt64(UInt32(bitPattern: pid)) << 32
        }
        return filled
    }

    package func write(to writer: inout WireWriter) {
        writer.list(instructions) { $0.u64($1) }
        writer.list(selfSlots) { $0.u32($1) }
        writer.bool(trapped)
    }

    package static func read(from reader: inout WireReader) throws(WireDecodingError) -> SystemCallFilterProgram {
        let instructions = try reader.list(minimumElementSize: 8) { reader throws(WireDecodingError) in try reader.u64() }
        let slots = try reader.list(minimumElementSize: 4) { reader throws(WireDecodingError) in try reader.u32() }
        return SystemCallFilterProgram(instructions: instructions, selfSlots: slots, trapped: try reader.bool())
    }
}
