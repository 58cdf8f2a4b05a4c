import Foundation

/// Where the things a plugin test needs are: the package under test, the library its own
/// `swift test` just built, and the `berth` executable (with `berth-worker` beside it).
enum TestBuild {
    /// The package folder holding `file` (the test's `#filePath`): the nearest folder above
    /// it with a Package.swift.
    static func package(holding file: String) throws(BerthTestingError) -> String {
        var folder = (file as NSString).deletingLastPathComponent
        while folder != "/" && !folder.isEmpty {
            if FileManager.default.fileExists(atPath: (folder as NSString).appendingPathComponent("Package.swift")) { return folder }
            folder = (folder as NSString).deletingLastPathComponent
        }
        throw BerthTestingError("\(file): no Package.swift in any folder above it")
    }

    /// The folder of the running test binary: SwiftPM puts the package's libraries there.
    static var buildFolder: String {
        var folder = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        folder = (folder as NSString).deletingLastPathComponent
        while folder.contains(".xctest") { folder = (folder as NSString).deletingLastPathComponent }
        return folder
    }

    /// The plugin library this test run built: `name`, or the one `.dynamic` library product
    /// of the package's Package.swift. Refused when a source file changed after the last
    /// build looked at it, so a test never runs code older than the sources (a `--skip-build`
    /// run after an edit).
    static func library(named name: String?, package: String) throws(BerthTestingError) -> String {
        let manifestPath = (package as NSString).appendingPathComponent("Package.swift")
        let file: String
        if let name {
            file = name
        } else {
            let manifest = (try? String(contentsOfFile: manifestPath, encoding: .utf8)) ?? ""
            let pattern = #/\.library\(\s*name:\s*"([^"]+)"\s*,\s*type:\s*\.dynamic/#
            let products = manifest.matches(of: pattern).map { String($0.output.1) }
            guard products.count == 1, let product = products.first else {
                throw BerthTestingError("\(manifestPath): \(products.count) .dynamic library products (\(products.joined(separator: ", "))); pass library: \"libNAME.so\"")
            }
            file = "lib\(product).so"
        }
        let path = (buildFolder as NSString).appendingPathComponent(file)
        guard let built = modified(path) else {
            throw BerthTestingError("\(path): not built (swift test builds every product of the package; is \(file) one of them?)")
        }
        let sources = (package as NSString).appendingPathComponent("Sources")
        for source in FileManager.default.subpaths(atPath: sources) ?? [] where source.hasSuffix(".swift") || source.hasSuffix(".c") {
            let sourcePath = (sources as NSString).appendingPathComponent(source)
            guard let changed = modified(sourcePath), changed > built else { continue }
            // A save that changed nothing the compiler sees relinks nothing: the build still
            // looked at it when the module's build folder was written after it.
            let target = source.split(separator: "/").first.map(String.init) ?? ""
            let looked = newestFile(in: (buildFolder as NSString).appendingPathComponent("\(target).build"))
            if looked.map({ changed > $0 }) ?? true {
                throw BerthTestingError("\(path) is older than Sources/\(source): run swift test without --skip-build, so the plugin under test is the code you see")
            }
        }
        return path
    }

    /// When the compiler last wrote its output in a module's build folder (objects,
    /// dependency and diagnostic files, the driver's priors; SwiftPM rewrites its output
    /// file map even under --skip-build, so that one does not count).
    private static func newestFile(in folder: String) -> Date? {
        let written = ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).filter { name in
            [".o", ".d", ".dia", ".priors"].contains { name.hasSuffix($0) }
        }
        return written.compactMap { modified((folder as NSString).appendingPathComponent($0)) }.max()
    }

    private static func modified(_ path: String) -> Date? {
        (try? FileManager.default.attributesOfItem(atPath: path))?[.modificationDate] as? Date
    }

    /// The Berth checkout this kit was built from (BerthSDK/Sources/BerthTesting/ is three
    /// folders below it).
    static var checkout: String {
        var folder = #filePath as NSString as String
        for _ in 0..<4 { folder = (folder as NSString).deletingLastPathComponent }
        return folder
    }

    /// The `berth` executable: `$BERTH_EXECUTABLE`, else the checkout's debug or release
    /// build, else `berth` on PATH. The error names every place it looked.
    static func berth() throws(BerthTestingError) -> String {
        var candidates: [String] = []
        if let named = ProcessInfo.processInfo.environment["BERTH_EXECUTABLE"], !named.isEmpty {
            candidates = [named]
        } else {
            candidates = ["debug", "release"].map { "\(checkout)/.build/\($0)/berth" }
            let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
            candidates += path.split(separator: ":").map { "\($0)/berth" }
        }
        guard let found = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
            throw BerthTestingError("no berth executable (looked at \(candidates.prefix(3).joined(separator: ", "))\(candidates.count > 3 ? " and PATH" : "")): run swift build in \(checkout), or set BERTH_EXECUTABLE")
        }
        return found
    }

    /// The worker beside `berth`: a worker-mode host starts one per plugin.
    static func worker(besides berth: String) throws(BerthTestingError) -> String {
        let resolved = (berth as NSString).resolvingSymlinksInPath
        let worker = ((resolved as NSString).deletingLastPathComponent as NSString).appendingPathComponent("berth-worker")
        guard FileManager.default.isExecutableFile(atPath: worker) else {
            throw BerthTestingError("no berth-worker beside \(resolved) (looked at \(worker)): build it with swift build in the checkout of that berth")
        }
        return worker
    }
}

/// Why the kit could not do what a test asked: one line naming the file, label or key.
public struct BerthTestingError: Error, CustomStringConvertible {
    public var description: String
    init(_ description: String) { self.description = description }
}
