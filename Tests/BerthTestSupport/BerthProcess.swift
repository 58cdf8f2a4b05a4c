import Foundation

/// Runs the built `berth` binary as a user would, capturing its output.
public struct BerthProcess {
    /// What a run printed and how it exited.
    public struct Output: Sendable {
        public var status: Int32
        public var standardOutput: String
        public var standardError: String
    }

    /// Runs `berth ARGUMENTS` in `directory`, with `input` on stdin, `extraEnvironment` set
    /// and `removingEnvironment` unset; `executable` is another copy of `berth`.
    public static func run(_ arguments: [String], in directory: String, input: String? = nil,
                           extraEnvironment: [String: String] = [:], executable: String = BuildProducts.berth,
                           removingEnvironment: [String] = []) throws -> Output {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.currentDirectoryURL = URL(fileURLWithPath: directory)
        var environment = ProcessInfo.processInfo.environment
        environment["XDG_RUNTIME_DIR"] = (directory as NSString).appendingPathComponent("run")
        // The default state folder (persisted values, REPL history) is the test's own too:
        // tests running at once never share one SQLite file, nor touch the user's.
        environment["XDG_STATE_HOME"] = (directory as NSString).appendingPathComponent("state")
        // The default trusted-keys folder is the test's own, never the user's.
        environment["XDG_CONFIG_HOME"] = (directory as NSString).appendingPathComponent("config")
        environment.merge(extraEnvironment) { _, extra in extra }
        for name in removingEnvironment { environment[name] = nil }
        process.environment = environment
        let stdout = Pipe()
        let stderr = Pipe()
        let stdin = Pipe()
        process.standardOutput = stdout
        process.standardError = stderr
        process.standardInput = stdin
        try process.run()
        if let input { stdin.fileHandleForWriting.write(Data(input.utf8)) }
        try stdin.fileHandleForWriting.close()
        // Read both pipes to the end before waiting, so a large output cannot block the child.
        let outputData = stdout.fileHandleForReading.readDataToEndOfFile()
        let errorData = stderr.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Output(
            status: process.terminationStatus,
            standardOutput: String(decoding: outputData, as: UTF8.self),
            standardError: String(decoding: errorData, as: UTF8.self)
        )
    }
}

/// Stored expected output for CLI tests (Tests/BerthCLITests/Expected/NAME.txt).
/// `BERTH_UPDATE_EXPECTED=1 swift test` rewrites the files from the current output.
public enum ExpectedOutput {
    /// `Expected/NAME.txt`; under `BERTH_ISOLATION=MODE` (the CI's second pass over the CLI
    /// suites) `Expected/NAME.MODE.txt` where one exists, since some transcripts show where
    /// each plugin runs.
    public static func path(_ name: String) -> String {
        let folder = "\(BuildProducts.packageRoot)/Tests/BerthCLITests/Expected/"
        if let mode = ProcessInfo.processInfo.environment["BERTH_ISOLATION"], mode != "manifest",
           FileManager.default.fileExists(atPath: folder + "\(name).\(mode).txt") {
            return folder + "\(name).\(mode).txt"
        }
        return folder + "\(name).txt"
    }

    /// The stored text, or (when updating) stores `actual` and returns it.
    public static func text(_ name: String, actual: String) -> String {
        let file = path(name)
        if ProcessInfo.processInfo.environment["BERTH_UPDATE_EXPECTED"] == "1" {
            try? FileManager.default.createDirectory(atPath: (file as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
            _ = FileManager.default.createFile(atPath: file, contents: Data(actual.utf8))
            return actual
        }
        return (try? String(contentsOfFile: file, encoding: .utf8)) ?? "<missing \(file): run with BERTH_UPDATE_EXPECTED=1>"
    }
}

/// Runs any tool (a compiler, make, swift build) and returns its exit status and its
/// combined output.
public enum ToolProcess {
    /// Runs `executable` and returns its status and its standard output and error together;
    /// `environment`, when given, replaces the test's own.
    public static func run(_ executable: String, _ arguments: [String], in directory: String,
                           environment: [String: String]? = nil) throws -> (Int32, String) {
        let process = Process()
        if let environment { process.environment = environment }
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.currentDirectoryURL = URL(fileURLWithPath: directory)
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }
}
