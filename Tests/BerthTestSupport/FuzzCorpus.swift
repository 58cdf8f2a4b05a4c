import Foundation

/// The fuzz harnesses' inputs (Docs/fuzzing.md): the seed corpus in Tests/Fuzz/corpus/HARNESS
/// and the inputs a fuzzer once crashed on, kept in Tests/Fuzz/regressions/HARNESS, so the
/// normal suite replays them through the same decoders.
public enum FuzzCorpus {
    /// Every input of `harness`, keyed `corpus/NAME` or `regressions/NAME`.
    public static func inputs(_ harness: String) -> [String: [UInt8]] {
        var inputs: [String: [UInt8]] = [:]
        for kind in ["corpus", "regressions"] {
            let folder = "\(BuildProducts.packageRoot)/Tests/Fuzz/\(kind)/\(harness)"
            for name in (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? [] {
                inputs["\(kind)/\(name)"] = FileManager.default.contents(atPath: "\(folder)/\(name)").map { [UInt8]($0) }
            }
        }
        return inputs
    }
}
