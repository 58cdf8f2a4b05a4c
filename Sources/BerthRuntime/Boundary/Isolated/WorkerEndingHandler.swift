import Logging
internal import CBerth

/// What serves a worker's requests while its last plugin unloads in the background
/// (`WorkerGroup.endOnLane`): nothing that needs the main actor, so the host can wait for the
/// worker's end at its exit without the two waiting on each other. The plugin's log lines
/// still reach its log, under its budget; any request is refused, and other notifications
/// (task ends, state writes of screens already closed) are dropped.
final class WorkerEndingHandler: IsolationChannelHandler {
    private let plugin: String
    private let log: IsolatedCallRouter.LogSink?

    init(plugin: String, log: IsolatedCallRouter.LogSink?) {
        self.plugin = plugin
        self.log = log
    }

    func handle(_ request: IsolationRequest, on channel: IsolationChannel) -> IsolationReply {
        .status(.failure(Int(BERTH_ERR_STATE), "\(plugin) is being unloaded: the host serves nothing more of it"))
    }

    func receive(_ notification: IsolationNotification, on channel: IsolationChannel) {
        guard case .log(_, let level, let message) = notification, let log else { return }
        log.budget.log(message, level: HostTable.logLevel(level), to: log.logger)
    }
}
