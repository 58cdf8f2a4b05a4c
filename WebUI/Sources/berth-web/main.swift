import BerthCLI
import BerthRuntime
import BerthWebUI
import Foundation

// `berth` with the web front end plugged in: `berth run --web` and `berth dev --web` execute
// this with their own arguments, so the `berth` binary never links the web server.
WebFrontEndHook.run = { host, port, stop in
    var options = WebFrontEnd.Options()
    options.port = port
    let frontEnd = WebFrontEnd(host: host, options: options)
    let serving = Task { @MainActor in
        try await frontEnd.run { url in
            FileHandle.standardOutput.write(Data("berth web: open \(url)\n".utf8))
        }
    }
    // Ends on Ctrl-C, SIGTERM, or quit/restart from a socket client; a server that could
    // not start ends it too.
    let stopped = Task { @MainActor in
        for await _ in stop { break }
        serving.cancel()
    }
    do {
        try await serving.value
        stopped.cancel()
        return 0
    } catch is CancellationError {
        return 0
    } catch {
        stopped.cancel()
        FileHandle.standardError.write(Data("error: the web front end: \(error)\n".utf8))
        return 1
    }
}
await Berth.runAndExit()
