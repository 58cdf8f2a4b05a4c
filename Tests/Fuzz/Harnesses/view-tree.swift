// libFuzzer harness: the view-tree decoder (ViewTreeDecoder.decode), given what a plugin's
// render could write, then walked as the host walks it after every render.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzViewTree(_ start: UnsafePointer<UInt8>, _ count: Int) -> Int32 {
    guard let tree = try? ViewTreeDecoder.decode(Array(UnsafeBufferPointer(start: start, count: count))) else { return 0 }
    _ = tree.allNodes.filter(\.isInteractive).count
    // The summary the host keeps of a parsed tree (title, node count, `if` branches).
    let summed = ViewNodeSummary(tree)
    _ = (summed.title, summed.count, summed.branches.count)
    return 0
}
