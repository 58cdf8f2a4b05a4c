import ArgumentParser
import BerthRuntime
import BerthTerminalUI
import Foundation

extension Berth {
    /// `berth test-host PACKAGE --library PATH`: the engine of the BerthTesting kit
    /// (BerthSDK/Sources/BerthTesting, Docs/testing-plugins.md). It packs the library a
    /// plugin's own `swift test` just built into a temporary folder, runs a host over it with
    /// the terminal front end on a headless terminal, and answers one JSON request per stdin
    /// line with one JSON frame per stdout line (`TestHostProtocol`). Hidden: a plugin test
    /// reaches it through the kit, never by hand.
    struct TestHost: AsyncParsableCommand {
        static let configuration = CommandConfiguration(commandName: "test-host", shouldDisplay: false)

        @Argument(help: "The plugin package (its sources say what `pack` writes into the manifest).")
        var package: String

        @Option(help: "The built plugin library to pack and load.")
        var library: String

        @OptionGroup var isolation: IsolationOptions

        @Option(help: "The headless terminal's columns.")
        var width = 80

        @Option(help: "The headless terminal's rows.")
        var height = 24

        func validate() throws {
            guard width >= 10, height >= 4 else { throw ValidationError("--width must be at least 10 and --height at least 4") }
        }

        @MainActor
        func run() async throws {
            TestHostProtocol.takeStandardOutput()
            let scratch = (NSTemporaryDirectory() as NSString).appendingPathComponent("berth-test-host-\(UUID().uuidString.prefix(8))")
            defer { try? FileManager.default.removeItem(atPath: scratch) }
            let plugins = (scratch as NSString).appendingPathComponent("plugins")
            let host: BerthHost
            do {
                let packed = try PluginPacker.pack(package, into: plugins, library: library)
                for warning in packed.warnings { FileHandleOutput.standardError("warning: \(warning)\n") }
                var configuration = BerthHost.Configuration(pluginFolders: [plugins], runtimeBase: scratch, logger: makeHostLogger(),
                                                            isolation: isolation.settings)
                configuration.stateDirectory = (scratch as NSString).appendingPathComponent("state")
                host = try BerthHost(configuration: configuration)
                host.discover()
                if let failure = host.activateDiscovered().first { throw failure }
            } catch {
                TestHostProtocol.reply(error: "\(error)".components(separatedBy: "\n").joined(separator: "; "))
                throw ExitStatus.failure
            }
            // Events (loads, screens, crashes with their reports) go with the log lines to
            // stderr: the kit keeps them as the test's `log`.
            _ = host.addEventObserver { event in FileHandleOutput.standardError("event: \(HostText.eventLine(event))\n") }
            let terminal = HeadlessTerminal(host: host, width: width, height: height)
            TestHostProtocol.reply(terminal)
            for await line in TestHostProtocol.requests() {
                do {
                    try await TestHostProtocol.perform(line, on: terminal)
                    TestHostProtocol.reply(terminal)
                } catch {
                    TestHostProtocol.reply(terminal, error: "\(error)")
                }
            }
            host.shutdown()
        }
    }
}
