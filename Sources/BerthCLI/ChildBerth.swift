@_spi(Engine) import BerthRuntime
import Foundation

/// This `berth` run again as a child process, for work that runs a plugin's code (a
/// conformance check, describing a library): a plugin that crashes ends the child, not
/// the command that asked.
struct ChildBerth {
    var standardOutput: Data
    var standardError: String
    /// The signal that ended the child, if one did.
    var signal: Int32?
    var status: Int32

    /// Runs `berth ARGUMENTS`, stopping it (SIGTERM) after `timeout` seconds.
    static func run(_ arguments: [String], timeout: Double = 30) throws -> ChildBerth {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: PluginTemplate.berthBinary)
        process.arguments = arguments
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        var environment = ProcessInfo.processInfo.environment
        let runtime = NSTemporaryDirectory() + "berth-validate-\(getuid())"
        try? FileManager.default.createDirectory(atPath: runtime, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        environment["XDG_RUNTIME_DIR"] = runtime
        process.environment = environment
        try process.run()
        let timer = DispatchWorkItem { if process.isRunning { process.terminate() } }
        DispatchQueue.global().asyncAfter(deadline: .now() + timeout, execute: timer)
        let stdout = output.fileHandleForReading.readDataToEndOfFile()
        let stderr = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        timer.cancel()
        let signal = process.terminationReason == .uncaughtSignal ? process.terminationStatus : nil
        return ChildBerth(standardOutput: stdout, standardError: stderr, signal: signal, status: process.terminationStatus)
    }

    /// "(signal 4, SIGILL): …: Fatal error: …" for a child ended by a signal, with the
    /// child's last fatal-error line (a Swift trap prints one before it dies); else nil.
    var crash: String? {
        guard let signal else { return nil }
        let fatal = standardError.split(separator: "\n").last { $0.contains("Fatal error") || $0.contains("fatal error") }
        return "(signal \(signal), \(WorkerTermination.name(ofSignal: signal)))" + (fatal.map { ": \($0)" } ?? "")
    }

    /// The child's last line on stderr, for a failure that printed no result.
    var lastErrorLine: String {
        standardError.split(separator: "\n").last.map(String.init) ?? "no output"
    }
}
