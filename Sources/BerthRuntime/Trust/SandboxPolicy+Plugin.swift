@_spi(Engine) import BerthCore
import Foundation

extension SandboxPolicy {
    /// The sandbox of an isolated plugin: read its folder and its shadow copies, read and
    /// write its data folder, plus the manifest's `files` grants (each only with its
    /// capability; `~/` is `home`) and TCP only with `network`. Its memory limit is the
    /// manifest's `limits.memory` up to `memoryLimit` (the host's ceiling), its extra
    /// variables the `hostEnvironment` values of the manifest's `environment` names (one the
    /// host does not have is not set).
    init(plugin: ValidatedPlugin, shadowFolder: String, dataFolder: String, home: String, memoryLimit: UInt64 = SandboxPolicy.defaultMemoryLimit,
         hostEnvironment: [String: String] = [:]) {
        let manifest = plugin.manifest
        let granted = manifest.grantedCapabilities
        let reads = granted.contains(.filesRead) ? manifest.files.read.map { FileGrants.resolve($0, home: home) } : []
        let writes = granted.contains(.filesWrite) ? manifest.files.write.map { FileGrants.resolve($0, home: home) } : []
        // Absolute: the worker binds each at its own path in a root of its own, where a path
        // relative to the host's folder (`berth run --plugins plugins`) means nothing.
        let absolute = { (path: String) in URL(fileURLWithPath: path).standardizedFileURL.path }
        self.init(readPaths: ([plugin.folder, shadowFolder] + reads).map(absolute), writePaths: ([dataFolder] + writes).map(absolute),
                  dataFolder: absolute(dataFolder), network: granted.contains(.network),
                  memoryLimit: manifest.limits.memoryLimit(hostCeiling: memoryLimit),
                  environment: hostEnvironment.filter { manifest.environment.contains($0.key) },
                  threadLimit: manifest.limits.threads ?? PluginLimits.defaultThreads,
                  cpuPercent: manifest.limits.cpuPercent ?? PluginLimits.defaultCPUPercent,
                  diskLimit: manifest.limits.disk ?? PluginLimits.defaultDisk)
    }
}

extension GenerationMaker {
    /// The sandbox for `plugin`'s next worker, its data folder created (mode 0700):
    /// `<state folder>/plugin-data/<id>` when the host persists state, else
    /// `<runtime folder>/data/<id>` (gone when the host exits).
    func sandboxPolicy(for plugin: ValidatedPlugin) throws(LoaderError) -> SandboxPolicy {
        let id = plugin.manifest.id
        let parent = configuration.stateDirectory.map { ($0 as NSString).appendingPathComponent("plugin-data") }
            ?? (runtimeDirectory.path as NSString).appendingPathComponent("data")
        let dataFolder = (parent as NSString).appendingPathComponent(id)
        do {
            try FileManager.default.createDirectory(atPath: dataFolder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            throw LoaderError(.copyFailed, plugin: id, path: dataFolder, systemError: error.localizedDescription, detail: "cannot create the plugin's data folder")
        }
        let environment = ProcessInfo.processInfo.environment
        let home = environment["HOME"] ?? NSHomeDirectory()
        return SandboxPolicy(plugin: plugin, shadowFolder: runtimeDirectory.folder(of: id), dataFolder: dataFolder, home: home,
                             memoryLimit: configuration.isolation.maxPluginMemory, hostEnvironment: environment)
    }
}
