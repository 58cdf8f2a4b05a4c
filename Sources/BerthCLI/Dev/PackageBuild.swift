import Foundation

/// Builds a plugin package the way its author would: `swift build` for a SwiftPM package,
/// `make` for a C package with a Makefile. The compiler's output is kept for the terminal.
struct PackageBuild {
    enum Tool: String {
        case swift, make
    }

    let package: String
    let tool: Tool

    /// Chooses the tool from the package's files; nil when there is neither a Package.swift
    /// nor a Makefile.
    init?(package: String) {
        self.package = package
        let has = { (file: String) in FileManager.default.fileExists(atPath: (package as NSString).appendingPathComponent(file)) }
        if has("Package.swift") { tool = .swift }
        else if has("Makefile") { tool = .make }
        else { return nil }
    }

    struct Outcome {
        var succeeded: Bool
        /// The tool's standard output and error, interleaved.
        var output: String
        var elapsed: Duration
    }

    var commandLine: [String] {
        switch tool {
        case .swift: ["swift", "build", "--package-path", package]
        case .make: ["make", "-C", package]
        }
    }

    func run() -> Outcome {
        let started = ContinuousClock.now
        let process = Process()
        // The build ends with `berth dev`, however dev ends (a SIGKILL included): util-linux's
        // setpriv gives it a parent-death signal. Without it, a stopped dev's `swift build`
        // went on compiling in a folder that was gone.
        let setpriv = "/usr/bin/setpriv"
        if FileManager.default.isExecutableFile(atPath: setpriv) {
            process.executableURL = URL(fileURLWithPath: setpriv)
            process.arguments = ["--pdeathsig", "TERM", "--", "/usr/bin/env"] + commandLine
        } else {
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = commandLine
        }
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        process.standardInput = FileHandle.nullDevice
        do {
            try process.run()
        } catch {
            return Outcome(succeeded: false, output: "cannot run \(commandLine.joined(separator: " ")): \(error)", elapsed: ContinuousClock.now - started)
        }
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        let succeeded = process.terminationReason == .exit && process.terminationStatus == 0
        return Outcome(succeeded: succeeded, output: text, elapsed: ContinuousClock.now - started)
    }
}
