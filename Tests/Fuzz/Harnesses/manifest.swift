// libFuzzer harness: the manifest decoder (PluginManifest.decode), exactly as validation
// calls it on a plugin.json. Built by scripts/fuzz with the Loading/Manifest folders of BerthRuntime and BerthCore.
import Foundation

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzManifest(_ start: UnsafePointer<UInt8>, _ count: Int) -> Int32 {
    let (manifest, problems) = PluginManifest.decode(Data(bytes: start, count: count), path: "fuzz/plugin.json")
    // Every problem must print as one line; a decoded manifest must print too.
    for problem in problems { _ = problem.description }
    if let manifest { _ = "\(manifest.id) \(manifest.version) \(manifest.exports.count)" }
    return 0
}
