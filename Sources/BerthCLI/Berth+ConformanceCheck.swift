import ArgumentParser
import Foundation
import BerthRuntime

extension Berth {
    /// `berth conformance-check CHECK FOLDER`: one check, in this (child) process; prints
    /// its result as JSON. `berth validate` runs it once per check.
    struct ConformanceCheckCommand: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "conformance-check", shouldDisplay: false)

        @Argument var check: String
        @Argument var folder: String

        @Option(help: "Where the plugin runs for the check (as `berth run --isolation`).")
        var isolation: IsolationOptions.Choice = .manifest

        func run() throws {
            guard let named = ConformanceCheck(rawValue: check) else {
                printError("no check named '\(check)' (\(ConformanceCheck.allCases.map(\.rawValue).joined(separator: ", ")))")
                throw ExitStatus.usage
            }
            let folder = folder
            let policy = isolation.policy
            let result: ConformanceResult = MainActor.assumeIsolated { ConformanceRunner.run(named, folder: folder, policy: policy) }
            emitLine(String(decoding: ControlProtocol.encode(result), as: UTF8.self))
        }
    }
}

/// Runs every check on a plugin folder, each in a child process, in order; a check whose
/// prerequisite failed is skipped.
enum ConformanceSuite {
    static func run(folder: String, isolation: IsolationOptions.Choice) -> [ConformanceResult] {
        var results: [ConformanceResult] = []
        var blocker: String?
        for check in ConformanceCheck.allCases {
            if let blocker {
                results.append(ConformanceResult(check: check.rawValue, status: .skip, message: "blocked by \(blocker)", milliseconds: 0))
                continue
            }
            let result = runChild(check, folder: folder, isolation: isolation)
            results.append(result)
            let prerequisites: [ConformanceCheck] = [.manifestSchema, .libraryLoads, .symbolsPresent, .abiHandshake]
            if result.status == .fail, prerequisites.contains(check) { blocker = check.rawValue }
        }
        return results
    }

    private static func runChild(_ check: ConformanceCheck, folder: String, isolation: IsolationOptions.Choice) -> ConformanceResult {
        let child: ChildBerth
        do {
            child = try ChildBerth.run(["conformance-check", check.rawValue, folder, "--isolation", isolation.rawValue])
        } catch {
            return ConformanceResult(check: check.rawValue, status: .fail, message: "could not start the check: \(error)", milliseconds: 0)
        }
        if let crash = child.crash {
            let reason = child.signal == SIGTERM ? "timed out after 30 s" : "the plugin crashed the check \(crash)"
            return ConformanceResult(check: check.rawValue, status: .fail, message: reason, milliseconds: 0)
        }
        guard let result = try? JSONDecoder().decode(ConformanceResult.self, from: child.standardOutput) else {
            return ConformanceResult(check: check.rawValue, status: .fail, message: "the check exited with status \(child.status): \(child.lastErrorLine)", milliseconds: 0)
        }
        return result
    }
}
