import ArgumentParser
import BerthRuntime

/// `berth`: list, validate and call plugins, or run the host.
public struct Berth: AsyncParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "berth",
        abstract: "A plugin host for Swift on Linux: discover, load, call and hot-reload plugins.",
        version: "berth 0.3.0 (plugin ABI \(HostABI.version))",
        subcommands: [
            List.self, Validate.self, Call.self, Run.self, New.self, Pack.self, Keygen.self, Dev.self,
            Status.self, Reload.self, Load.self, Unload.self, Tree.self, Events.self, Restart.self, Host.self,
            ConformanceCheckCommand.self, DescribeLibrary.self, TestHost.self,
        ]
    )

    public init() {}

    /// Parses and runs, exiting with Berth's codes: a usage error (an unknown option, a
    /// missing argument, a failed check) is 2 with the message on stderr, like every
    /// other usage error of the CLI.
    @MainActor
    public static func runAndExit() async -> Never {
        do {
            var command = try parseAsRoot()
            if var asynchronous = command as? AsyncParsableCommand {
                try await asynchronous.run()
            } else {
                try command.run()
            }
            Self.exit()
        } catch {
            if exitCode(for: error) == .validationFailure {
                printError(message(for: error))
                FileHandleOutput.standardError(usageString(for: error) + "\n")
                Self.exit(withError: ExitStatus.usage)
            }
            Self.exit(withError: error)
        }
    }

    private static func usageString(for error: Error) -> String {
        fullMessage(for: error).components(separatedBy: "\n").filter { $0.hasPrefix("Usage:") || $0.hasPrefix("  See") }.joined(separator: "\n")
    }
}

/// Exit codes: 0 success, 1 a plugin or host failure, 2 a usage error (nothing was run).
enum ExitStatus {
    static let failure = ExitCode(1)
    static let usage = ExitCode(2)
}
