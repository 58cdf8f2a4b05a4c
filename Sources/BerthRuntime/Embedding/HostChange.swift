@_spi(Engine) import BerthCore
/// One element of `BerthHost.changes`.
public enum HostChange: Sendable {
    /// An outermost host operation ended (a navigation, an input, a task's post, a delegate
    /// action, a route context, a load, reload or crash): what a front end shows may differ.
    case changed
    /// A line of the host's event log, as it was emitted.
    case event(HostEvent)
}

/// The open `changes` sequences of one host, ended together when it shuts down.
@MainActor
final class HostChangeFeeds {
    private var continuations: [Int: AsyncStream<HostChange>.Continuation] = [:]
    private var nextKey = 0
    private(set) var ended = false
    /// How many sequences are open.
    var count: Int { continuations.count }

    /// Keeps `continuation` until it ends or `endAll`; returns its key.
    func add(_ continuation: AsyncStream<HostChange>.Continuation) -> Int {
        defer { nextKey += 1 }
        continuations[nextKey] = continuation
        return nextKey
    }

    func remove(_ key: Int) {
        continuations[key] = nil
    }

    /// Ends every sequence (host shutdown); later ones end at once.
    func endAll() {
        ended = true
        let ending = continuations.values
        continuations.removeAll()
        for continuation in ending { continuation.finish() }
    }
}
