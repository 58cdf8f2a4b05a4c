import BerthRuntime
import Foundation

extension HostRunner {
    /// `berth run --web` inside `berth-web`: the web front end instead of the REPL, until
    /// Ctrl-C, SIGTERM, or `quit`/`restart` from a socket client.
    func runWebUI(host: BerthHost, port: Int, frontEnd: WebFrontEndHook.Run) async -> Int32 {
        let (stop, feed) = AsyncStream.makeStream(of: Void.self)
        let control = self.control
        control.wake = { if control.finished || control.restartRequested { feed.yield() } }
        let signals = Task {
            while !Task.isCancelled {
                try? await Task.sleep(for: .milliseconds(100))
                if terminationRequested.load(ordering: .relaxed) { feed.yield() }
            }
        }
        defer { signals.cancel() }
        return await frontEnd(host, port, stop)
    }
}
