// libFuzzer harness: the ELF reader (ELFImage(bytes:path:)), as validation runs it on a
// plugin's library before any of its code is mapped.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzELF(_ start: UnsafePointer<UInt8>, _ count: Int) -> Int32 {
    do {
        let image = try ELFImage(bytes: Array(UnsafeBufferPointer(start: start, count: count)), path: "fuzz.so")
        _ = image.exports("berth_plugin_entry_v1")
    } catch {
        _ = error.detail
    }
    return 0
}
