/// What an `IsolationChannel` calls when the peer sends something: requests and
/// notifications, on the thread that is waiting in the channel (inside `call`,
/// `serveNext` or `serveAvailable`). A request handler may call back through the same
/// channel: that call nests on the same stack, as deep as it needs.
package protocol IsolationChannelHandler: AnyObject {
    /// Answers a request from the peer.
    func handle(_ request: IsolationRequest, on channel: IsolationChannel) -> IsolationReply
    /// Takes a notification from the peer.
    func receive(_ notification: IsolationNotification, on channel: IsolationChannel)
}
