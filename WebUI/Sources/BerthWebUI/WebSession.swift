import Foundation

/// The one host state every connected page sees: it keeps the last state sent and its
/// version, turns each host change into a patch for every page, runs the pages' commands,
/// and holds the banner (a crash) that every page shows until one dismisses it.
@MainActor
final class WebSession {
    private let adapter: WebHostAdapter
    private var state = WebState()
    private var version = 0
    private var events: [WebEvent] = []
    private var banner: WebBanner?
    private var clients: [Int: AsyncStream<String>.Continuation] = [:]
    private var nextClient = 1
    private var publishPending = false
    /// Whether a page's command is running (its own publish follows it).
    private var performing = false
    private var figures: Task<Void, Never>?
    private let encoder = JSONEncoder()

    init(adapter: WebHostAdapter) {
        self.adapter = adapter
    }

    /// Starts following the host; the first state is made now.
    func start() async {
        events = await adapter.events()
        banner = await adapter.startupProblem()
        adapter.observe(changes: { [weak self] in self?.schedulePublish() }, events: { [weak self] event in self?.note(event) })
        state = await makeState()
        // Memory and processor time move on their own: the inspector's figures refresh
        // every second (a patch only when one changed).
        figures = Task { [weak self] in
            while !Task.isCancelled {
                try? await Task.sleep(for: .seconds(1))
                await self?.publish(refreshFigures: true)
            }
        }
    }

    /// Stops following the host and ends every page's stream.
    func stop() {
        figures?.cancel()
        adapter.stopObserving()
        for client in clients.values { client.finish() }
        clients.removeAll()
    }

    /// A new page: its stream starts with the whole state.
    func connect() -> (id: Int, messages: AsyncStream<String>) {
        let (stream, continuation) = AsyncStream.makeStream(of: String.self, bufferingPolicy: .unbounded)
        let id = nextClient
        nextClient += 1
        clients[id] = continuation
        continuation.yield(encode(WebStateMessage(version: version, state: state)))
        return (id, stream)
    }

    /// A page went away.
    func disconnect(_ id: Int) {
        clients.removeValue(forKey: id)?.finish()
    }

    /// Runs one message from page `client`: every page gets the patch it caused, then
    /// `client` alone gets `done` with the error, if any.
    func receive(_ text: String, from client: Int) async {
        let (request, parsed) = WebRequest.parse(Array(text.utf8))
        var failure: String?
        switch parsed {
        case .failure(let error): failure = error.description
        case .success(.dismissBanner): banner = nil
        case .success(let command):
            // The host's change notifications during the command need no publish of their
            // own: the one below follows it.
            performing = true
            do {
                try await adapter.perform(command)
            } catch {
                failure = error.description
            }
            performing = false
        }
        await publish()
        clients[client]?.yield(encode(WebDoneMessage(request: request, error: failure)))
    }

    private func note(_ event: WebEvent) {
        events.append(event)
        if events.count > WebState.eventLimit { events.removeFirst(events.count - WebState.eventLimit) }
        if event.kind == "crashed" {
            let text = event.message.contains(event.subject) ? event.message : "\(event.subject) crashed: \(event.message)"
            banner = WebBanner(sequence: event.sequence, text: text)
        }
        schedulePublish()
    }

    /// Coalesces: many changes in one turn of the main actor, one patch.
    private func schedulePublish() {
        guard !publishPending, !performing else { return }
        publishPending = true
        Task { [weak self] in await self?.publish() }
    }

    private func makeState(refreshFigures: Bool = false) async -> WebState {
        var next = await adapter.snapshot(refreshFigures: refreshFigures)
        next.events = events
        next.banner = banner
        return next
    }

    /// Sends every page what changed since the last version (nothing when nothing did).
    private func publish(refreshFigures: Bool = false) async {
        publishPending = false
        let next = await makeState(refreshFigures: refreshFigures)
        let patch = WebStatePatch(from: state, to: next, version: version + 1)
        guard !patch.isEmpty else { return }
        version += 1
        state = next
        let text = encode(patch)
        for client in clients.values { client.yield(text) }
    }

    private func encode(_ value: some Encodable) -> String {
        // Every value here encodes (strings, numbers, arrays): a failure is a defect.
        guard let data = try? encoder.encode(value) else { preconditionFailure("a web message did not encode") }
        return String(decoding: data, as: UTF8.self)
    }
}
