package import CBerth

/// Collects what a plugin writes into a `berth_sink` (a rendered tree, saved state).
package final class SinkBuffer {
    package private(set) var bytes: [UInt8] = []

    package init() {}

    /// Calls `body` with a sink appending to this buffer; valid only during the call.
    package func withSink<T>(_ body: (UnsafePointer<berth_sink>) -> T) -> T {
        var sink = berth_sink()
        sink.struct_size = UInt32(MemoryLayout<berth_sink>.size)
        sink.context = Unmanaged.passUnretained(self).toOpaque()
        sink.write = { context, data, length in
            guard let context else { return berth_status(BERTH_ERR_INVALID_ARGUMENT) }
            let buffer = Unmanaged<SinkBuffer>.fromOpaque(context).takeUnretainedValue()
            if let data, length > 0 { buffer.bytes.append(contentsOf: UnsafeBufferPointer(start: data, count: Int(length))) }
            return berth_status(BERTH_OK)
        }
        return withUnsafePointer(to: &sink) { body($0) }
    }

    /// Writes `bytes` into a sink a plugin handed the host.
    package static func write(_ bytes: [UInt8], to sink: UnsafePointer<berth_sink>?) -> berth_status {
        guard let sink, let write = sink.pointee.write else { return berth_status(BERTH_ERR_INVALID_ARGUMENT) }
        return bytes.withUnsafeBufferPointer { write(sink.pointee.context, $0.baseAddress, UInt64($0.count)) }
    }
}
