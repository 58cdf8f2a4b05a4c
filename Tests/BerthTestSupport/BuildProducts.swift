import Foundation

/// Where `swift build` put the things tests load: the plugin libraries and the `berth`
/// binary sit beside the test bundle. Tests never link a plugin; they dlopen these files.
public enum BuildProducts {
    /// The build folder (`.build/<triple>/debug`).
    public static let directory: String = {
        TestProcess.prepared
        let executable = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        var folder = (executable as NSString).deletingLastPathComponent
        // The test runner may sit inside a `.xctest` bundle folder.
        while folder.hasSuffix(".xctest") || folder.contains(".xctest/") {
            folder = (folder as NSString).deletingLastPathComponent
        }
        return folder
    }()

    /// The package's root folder.
    public static let packageRoot: String = {
        var folder = (#filePath as NSString).deletingLastPathComponent // Tests/BerthTestSupport
        folder = (folder as NSString).deletingLastPathComponent        // Tests
        return (folder as NSString).deletingLastPathComponent
    }()

    /// A built library by file name (`libCounter.so`); fails the caller's test when missing.
    public static func library(_ name: String) -> String {
        (directory as NSString).appendingPathComponent(name)
    }

    /// The built `berth` executable.
    public static var berth: String { (directory as NSString).appendingPathComponent("berth") }

    /// An example manifest from manifests/ (`counter.json`).
    public static func manifest(_ name: String) -> String {
        ((packageRoot as NSString).appendingPathComponent("manifests") as NSString).appendingPathComponent(name)
    }
}
