// libFuzzer harness: the control socket's frame decoder and request decoding, fed the bytes
// a client could send (ControlProtocol.readFrame over a ControlByteStream, then
// ControlRequest(frame:), as HostRunner serves a connection).
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzControlFrames(_ start: UnsafePointer<UInt8>, _ count: Int) -> Int32 {
    for request in ControlByteStream.requests(in: Array(UnsafeBufferPointer(start: start, count: count))) {
        _ = request?.args.joined(separator: " ")
    }
    return 0
}
