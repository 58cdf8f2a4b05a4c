import ArgumentParser

/// `berth`: list, validate and call plugins, or run the host.
public struct Berth: ParsableCommand {
    public static let configuration = CommandConfiguration(
        commandName: "berth",
        abstract: "A plugin host for Swift on Linux: discover, load, call and hot-reload plugins.",
        subcommands: [List.self, Validate.self, Call.self, Run.self]
    )

    public init() {}
}

/// Exit codes: 0 success, 1 a plugin or host failure, 2 a usage error (nothing was run).
enum ExitStatus {
    static let failure = ExitCode(1)
    static let usage = ExitCode(2)
}
