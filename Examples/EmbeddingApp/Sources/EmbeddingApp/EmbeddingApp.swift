import BerthRuntime
import BerthTerminalUI
import Foundation

/// `EmbeddingApp [PLUGINS-FOLDER] [ROUTE]`: a host over the folder (default `plugins`),
/// every valid plugin loaded, ROUTE (or the first route found) opened, and the terminal
/// front end until the person quits (Ctrl-C, or `:quit`). It reads the host only through its
/// value API (here `pluginSnapshots()`; Docs/embedding.md lists the rest).
@main
struct EmbeddingApp {
    static func main() async {
        let arguments = Array(CommandLine.arguments.dropFirst())
        let folder = arguments.first ?? "plugins"

        // 1. Configure: the plugins folder and where persisted values go. Isolated plugins
        //    run in berth-worker, found through $BERTH_WORKER or beside the app.
        var configuration = BerthHost.Configuration(pluginFolders: [folder])
        configuration.stateDirectory = (NSTemporaryDirectory() as NSString).appendingPathComponent("embedding-app-state")

        // 2. Start the host (everything runs on the main actor), find and load the plugins.
        let host: BerthHost
        do {
            host = try await MainActor.run { try BerthHost(configuration: configuration) }
        } catch {
            FileHandle.standardError.write(Data("cannot start the host: \(error)\n".utf8))
            exit(1)
        }
        await MainActor.run {
            let found = host.discover()
            for rejected in found.rejected { print("skipped \(rejected.folder): \(rejected.reason)") }
            for error in host.activateDiscovered() { print("not loaded: \(error)") }
        }

        // 3. Show the first screen in the terminal front end. ROUTE as typed is parsed into a
        //    `Route` here, at the edge; a malformed one is named in one line.
        var route: Route?
        if let text = arguments.dropFirst().first {
            do {
                route = try Route(parsing: text)
            } catch {
                FileHandle.standardError.write(Data("\(error)\n".utf8))
                exit(2)
            }
        } else {
            // The plugins as values (`PluginSnapshot`), sorted by id: the first route found.
            route = await MainActor.run { host.pluginSnapshots().lazy.compactMap(\.routes.first).first }
        }
        var options = TerminalFrontEnd.Options()
        options.initialRoute = route
        let frontEnd = TerminalFrontEnd(host: host, options: options)
        do {
            try await frontEnd.run()
        } catch {
            FileHandle.standardError.write(Data("\(error)\n".utf8))
        }

        // 4. Shut down: every screen closed through its close sequence, workers ended.
        await MainActor.run { host.shutdown() }
    }
}
