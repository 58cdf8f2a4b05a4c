import BerthRuntime
import Logging

extension PluginWorkspace {
    /// A host over this workspace's plugins folder, discovered, with its runtime folder
    /// inside the workspace and plugin logging silenced.
    @MainActor
    public func makeHost(recorder: LogRecorder? = nil) throws -> BerthHost {
        let logger = recorder?.logger() ?? Logger(label: "berth.test") { _ in SwiftLogNoOpLogHandler() }
        let host = try BerthHost(configuration: .init(pluginFolders: [plugins], runtimeBase: runtimeBase, logger: logger))
        host.discover()
        return host
    }
}
