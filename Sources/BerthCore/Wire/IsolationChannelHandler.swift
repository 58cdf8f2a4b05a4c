/// What an `IsolationChannel` calls when the peer sends something: requests and
/// notifications, on the thread that is waiting in the channel (inside `call`,
/// `serveNext` or `serveAvailable`). A request handler may call back through the same
/// channel: that call nests on the same stack, as deep as it needs.
///
/// `Sendable`: the channel is, and any thread may drive its reading side, so the handler
/// it holds must be safe to call from there. The runtime's two are main-actor classes
/// (`WorkerSession` on the worker's main thread, `IsolatedCallRouter` on the host's main
/// actor), whose `handle`/`receive` assume that isolation and trap on any other thread.
package protocol IsolationChannelHandler: AnyObject, Sendable {
    /// Answers a request from the peer.
    func handle(_ request: IsolationRequest, on channel: IsolationChannel) -> IsolationReply
    /// Takes a notification from the peer.
    func receive(_ notification: IsolationNotification, on channel: IsolationChannel)
}
