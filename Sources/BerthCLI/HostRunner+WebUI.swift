import BerthRuntime
import Foundation
import ServiceLifecycle

extension HostRunner {
    /// `berth run --web` inside `berth-web`: the web front end instead of the REPL, until
    /// graceful shutdown (Ctrl-C, SIGTERM) or `quit`/`restart` from a socket client.
    func runWebUI(host: BerthHost, port: Int, frontEnd: WebFrontEndHook.Run) async -> Int32 {
        let (stop, feed) = AsyncStream.makeStream(of: Void.self)
        let control = self.control
        control.setWake { if control.finished || control.restartRequested { feed.yield() } }
        return await withGracefulShutdownHandler {
            await frontEnd(host, port, stop)
        } onGracefulShutdown: {
            feed.yield()
        }
    }
}
