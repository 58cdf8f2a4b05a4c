@_spi(Engine) import BerthCore
import Foundation

/// Reading a manifest from disk, kept apart from decoding (which the manifest fuzzer
/// compiles on its own, without the file layer).
extension PluginManifest {
    /// Reads and decodes the manifest file at `path` (never waiting on a FIFO: see `RawFile`).
    /// `package`: for the CLI's folder commands (`list`, `new`, `pack`, `keygen`, `validate`).
    package static func load(path: String) -> (manifest: PluginManifest?, problems: [PluginProblem]) {
        guard let data = RawFile.contents(path, limit: Limits.fileBytes) else {
            let reason = RawFile.failure
            if errno == EFBIG {
                return (nil, [PluginProblem(path: path, field: "file", message: RawFile.tooLong(path, limit: Limits.fileBytes, what: "a manifest"))])
            }
            return (nil, [PluginProblem(path: path, field: "file", message: "cannot read the manifest: \(reason)")])
        }
        return decode(data, path: path)
    }
}
