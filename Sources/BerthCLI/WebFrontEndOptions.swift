import ArgumentParser
public import BerthRuntime
import Foundation

/// `--web [--port N]`: show the host's screens in a browser (Docs/web-ui.md).
struct WebFrontEndOptions: ParsableArguments {
    @Flag(name: .customLong("web"), help: "Serve the plugins' screens to a browser on 127.0.0.1 (prints the URL with its token; needs berth-web: scripts/build-web).")
    var enabled = false

    @Option(name: .customLong("port"), help: "The port --web listens on (0: any free port).")
    var port = 8_642

    func validate() throws {
        guard (0...65_535).contains(port) else { throw ValidationError("--port takes 0 to 65535, got \(port)") }
    }
}

/// The web front end a separate executable plugs in. The `berth` binary has none (it never
/// links the web server): there, `--web` executes `berth-web` with the same arguments;
/// `berth-web` sets `run` and then runs these same commands.
public enum WebFrontEndHook {
    /// Serves `host` on `port` until `stop` yields; returns the exit status.
    public typealias Run = @MainActor (_ host: BerthHost, _ port: Int, _ stop: AsyncStream<Void>) async -> Int32

    /// The front end, when this executable has one. Set once, by `berth-web`'s first line,
    /// before any command runs, and only read after: no lock needed.
    nonisolated(unsafe) public static var run: Run?

    /// Runs `berth-web` in place of this process with this process's arguments, or
    /// returns why it cannot (it is not built).
    static func executeWebExecutable() -> String {
        guard let path = locate() else {
            return "--web needs berth-web, which is not built: run scripts/build-web (or set $BERTH_WEB to its path)"
        }
        // berth-web runs plugins in workers of this same build.
        let worker = (executableFolder() as NSString).appendingPathComponent("berth-worker")
        if ProcessInfo.processInfo.environment["BERTH_WORKER"] == nil, FileManager.default.isExecutableFile(atPath: worker) {
            setenv("BERTH_WORKER", worker, 1)
        }
        let arguments = [path] + CommandLine.arguments.dropFirst()
        let cArguments = arguments.map { strdup($0) } + [nil]
        execv(path, cArguments)
        return "cannot run \(path): \(String(cString: strerror(errno)))"
    }

    /// `$BERTH_WEB`, else `berth-web` beside this executable, else the WebUI package's
    /// build of this checkout (`WebUI/.build/debug` or `release`, found by walking up).
    static func locate() -> String? {
        let files = FileManager.default
        if let named = ProcessInfo.processInfo.environment["BERTH_WEB"], !named.isEmpty {
            return files.isExecutableFile(atPath: named) ? named : nil
        }
        var folder = executableFolder()
        let beside = (folder as NSString).appendingPathComponent("berth-web")
        if files.isExecutableFile(atPath: beside) { return beside }
        let configuration = (folder as NSString).lastPathComponent
        for _ in 0..<5 {
            folder = (folder as NSString).deletingLastPathComponent
            let candidate = "\(folder)/WebUI/.build/\(configuration)/berth-web"
            if files.isExecutableFile(atPath: candidate) { return candidate }
        }
        return nil
    }

    private static func executableFolder() -> String {
        let path = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        return (path as NSString).deletingLastPathComponent
    }
}
