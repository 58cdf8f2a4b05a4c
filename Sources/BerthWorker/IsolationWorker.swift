import BerthCore
internal import CBerthSystem
internal import Glibc
// The main queue the worker drains (berth_drain_main_queue) is libdispatch's; importing
// Dispatch links it (Foundation linked it before).
internal import Dispatch

/// The `berth-worker` process: hosts one plugin generation and serves it to the host over
/// the channel the host passed as a descriptor (`WorkerProcess.spawn`).
///
/// `berth-worker --fd 3 [--parent PID]`. With `--parent`, a worker whose parent is no
/// longer that process exits at once (the host died before the worker could ask for the
/// parent-death signal, which its `main` does first).
package enum IsolationWorker {
    /// How a worker exits.
    package enum ExitStatus: Int32, Sendable {
        /// Shut down on request.
        case shutdown = 0
        /// Bad command line.
        case usage = 2
        /// The host is gone (end of file on the channel, or a different parent).
        case hostGone = 3
        /// The channel failed in another way (a malformed frame, a system error).
        case channelFailed = 4
    }

    /// Runs the worker on the calling thread (the process's main thread) until the host
    /// sends `shutdown` or goes away. Returns the status to exit with.
    @MainActor
    package static func run(arguments: [String]) -> ExitStatus {
        var descriptor: Int32 = 3
        var parent: Int32?
        var remaining = arguments[...]
        while let option = remaining.popFirst() {
            guard let value = remaining.popFirst().flatMap({ Int32($0) }) else {
                report("\(option) needs a number; usage: berth-worker --fd N [--parent PID] [--network-namespace N]")
                return .usage
            }
            switch option {
            case "--fd": descriptor = value
            case "--parent": parent = value
            // The host's shared network namespace: its user namespace at N, itself at N + 1.
            case "--network-namespace": WorkerSandbox.sharedNetwork = (value, value + 1)
            default:
                report("unknown option \(option); usage: berth-worker --fd N [--parent PID] [--network-namespace N]")
                return .usage
            }
        }
        if let parent, getppid() != parent {
            report("the host (pid \(parent)) is already gone")
            return .hostGone
        }
        // Every write to the host uses MSG_NOSIGNAL; this covers a plugin writing to a pipe.
        signal(SIGPIPE, SIG_IGN)
        let channel: IsolationChannel
        do {
            channel = try IsolationChannel(fileDescriptor: descriptor, peer: "host")
        } catch {
            report("descriptor \(descriptor) is not a usable channel: \(error.message)")
            return .usage
        }
        let session = WorkerSession(channel: channel)
        WorkerSession.current = session
        // Plugins here call the host across the channel (before any plugin is loaded).
        HostAdapter.use(WorkerTransport())
        WorkerShared.current.withLock { $0 = session.shared }
        channel.handler = session
        // Between requests the main thread also runs the main dispatch queue, as the host's
        // main actor does in process: `DispatchQueue.main.async` and `@MainActor` tasks of
        // the plugin run while the host is not calling (never inside a call).
        let mainQueue = berth_main_queue_descriptor()
        while !session.isFinished {
            do {
                if mainQueue < 0 {
                    try channel.serveNext()
                    continue
                }
                try channel.serveAvailable()
                guard !session.isFinished else { break }
                if waitForHostOrMainQueue(channel: channel.fileDescriptor, mainQueue: mainQueue) { berth_drain_main_queue() }
            } catch {
                if error.code == .peerClosed { return .hostGone }
                report(error.message)
                return .channelFailed
            }
        }
        return .shutdown
    }

    /// Waits until the host sent something or work was queued on the main queue; true for
    /// the main queue.
    private static func waitForHostOrMainQueue(channel: Int32, mainQueue: Int32) -> Bool {
        var descriptors = [pollfd(fd: channel, events: Int16(POLLIN), revents: 0),
                           pollfd(fd: mainQueue, events: Int16(POLLIN), revents: 0)]
        while poll(&descriptors, 2, -1) < 0 && errno == EINTR {}
        return descriptors[1].revents & Int16(POLLIN) != 0
    }

    private static func report(_ message: String) {
        SystemFile.write(Array("berth-worker[\(getpid())]: \(message)\n".utf8), to: STDERR_FILENO)
    }
}
