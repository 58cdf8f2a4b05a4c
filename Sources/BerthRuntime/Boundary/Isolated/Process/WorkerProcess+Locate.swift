@_spi(Engine) import BerthCore
import Foundation

extension WorkerProcess {
    /// Finds the worker executable: `$BERTH_WORKER` when set, else beside the running
    /// executable (an installed `berth`, or the build products folder holding a test
    /// bundle), else in `.build/debug` or `.build/release` under the current folder.
    package static func locateExecutable(named name: String = "berth-worker") -> String? {
        let files = FileManager.default
        if let override = ProcessInfo.processInfo.environment["BERTH_WORKER"], !override.isEmpty {
            return files.isExecutableFile(atPath: override) ? override : nil
        }
        return executableCandidates(named: name).first { files.isExecutableFile(atPath: $0) }
    }

    /// Where `locateExecutable` looks when `$BERTH_WORKER` is not set, in order: the
    /// folder of the running executable (and above a `.xctest` bundle), then `.build/debug`
    /// and `.build/release` under the current folder.
    package static func executableCandidates(named name: String = "berth-worker") -> [String] {
        let files = FileManager.default
        var folders: [String] = []
        let running = (try? files.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments.first ?? ""
        var folder = ParentPath.of(running)
        folders.append(folder)
        // A test runner inside a `.xctest` bundle: the products are beside the bundle.
        while folder.contains(".xctest") {
            folder = ParentPath.of(folder)
            folders.append(folder)
        }
        let current = files.currentDirectoryPath
        folders += [current + "/.build/debug", current + "/.build/release"]
        return folders.map { ($0 as NSString).appendingPathComponent(name) }
    }
}
