/// Reading a manifest from disk, kept apart from decoding (which the manifest fuzzer
/// compiles on its own, without the file layer).
extension PluginManifest {
    /// Reads and decodes the manifest file at `path` (never waiting on a FIFO: see `RawFile`).
    /// `package`: for the CLI's folder commands (`list`, `new`, `pack`, `keygen`, `validate`).
    package static func load(path: String) -> (manifest: PluginManifest?, problems: [PluginProblem]) {
        guard let data = RawFile.contents(path) else {
            let reason = RawFile.failure
            return (nil, [PluginProblem(path: path, field: "file", message: "cannot read the manifest: \(reason)")])
        }
        return decode(data, path: path)
    }
}
