@_spi(Engine) import BerthCore
/// One line of the host's event log.
public struct HostEvent: Sendable, CustomStringConvertible {
    /// What happened: a plugin found, loaded, reloaded, retired, unloaded or failed; a screen created, activated, deactivated or released; a screen's lifecycle event; a limit crossed, a worker crash, a refused call.
    public enum Kind: String, Sendable {
        /// A plugin was found, rejected by validation, loaded, reloaded, retired (a Swift image kept mapped), unloaded, or failed (to load or reload, or past its crash budget).
        case discovered, rejected, loaded, reloaded, retired, unloaded, failed
        /// A screen was created, activated, deactivated or released, or was sent a lifecycle event.
        case created, activated, deactivated, released, event
        /// Retired Swift images passed `BerthHost.retiredLimitBytes` (once per crossing).
        case retiredLimitExceeded
        /// A plugin's worker process died or stopped answering.
        case crashed
        /// A plugin's call was refused: its manifest lacks the capability, or its worker's
        /// system-call filter refused it (subject: the plugin; each member of a group).
        case denied
        /// Found at discovery, stopping nothing: a contract a plugin consumes that no plugin
        /// in the plugins folders provides (subject: the consumer).
        case warning
    }

    /// Its position in the host's log, counting from 1.
    public var sequence: Int
    /// What happened.
    public var kind: Kind
    /// Who or what the event is about: a plugin, a screen, the host, a folder…
    public var subject: Subject
    /// What happened, in words (a reload's phase timings included).
    public var message: String {
        get { messageText.formatted(timings: reloadTimings) }
        set { messageText = .plain(newValue) }
    }
    /// A `reloaded` event's phases; nil for every other event.
    public var reloadTimings: ReloadTimings? {
        get { timings?.value }
        set { timings = newValue.map(TimingsBox.init) }
    }
    /// Boxed: every event is copied into the log and to each observer, and only a reload's
    /// event has timings (nine durations).
    private var timings: TimingsBox?
    /// The message as emitted: formatted when first read, not when logged.
    var messageText: Text

    /// `subject: message`, the line the CLI prints.
    public var description: String { "\(subject): \(message)" }

    init(sequence: Int, kind: Kind, reloadTimings: ReloadTimings?, subject: Subject, messageText: Text) {
        self.sequence = sequence
        self.kind = kind
        self.subject = subject
        self.messageText = messageText
        self.reloadTimings = reloadTimings
    }

    /// Who or what an event is about, as fields; `description` is the text the CLI shows.
    public enum Subject: Sendable, Hashable, CustomStringConvertible {
        /// A plugin, by id.
        case plugin(String)
        /// A screen, by router id ("screen 7").
        case screen(Int)
        /// The host itself ("host").
        case host
        /// A plugin folder that has no valid id (a rejected folder), by path.
        case folder(String)
        /// The folder watcher ("watch").
        case watcher
        /// Signature trust: keys and revocations ("trust").
        case trust
        /// The host's session scope ("session").
        case session
        /// Reopening screens after a restart ("restart").
        case restart

        /// The subject as a line of the event log shows it.
        public var description: String {
            switch self {
            case .plugin(let id): id
            case .screen(let id): "screen \(id)"
            case .host: "host"
            case .folder(let path): path
            case .watcher: "watch"
            case .trust: "trust"
            case .session: "session"
            case .restart: "restart"
            }
        }
    }

    private final class TimingsBox: Sendable {
        let value: ReloadTimings
        init(_ value: ReloadTimings) { self.value = value }
    }
}

/// The host's event log: the recent events in order, and who is told of new ones.
@MainActor
final class EventLog {
    /// The most recent events (sequence numbers keep counting past what was dropped).
    /// Unchecked exclusivity, with `count`: written by every host operation; main-actor
    /// state whose in-place changes (append, removeFirst) call out to nothing (observers
    /// are called after the append, over a copy of their list).
    @exclusivity(unchecked) private(set) var events: [HostEvent] = []
    static let limit = 10_000
    @exclusivity(unchecked) private var count = 0
    /// Who is told of each new event, in the order they subscribed. Unchecked exclusivity,
    /// as `changeObservers` in `Navigator`: called over a copy.
    @exclusivity(unchecked) private var observers: [(token: Int, observer: (HostEvent) -> Void)] = []
    private var nextToken = 1

    func emit(_ kind: HostEvent.Kind, _ subject: HostEvent.Subject, _ message: String, reloadTimings: ReloadTimings? = nil) {
        emit(kind, subject, .plain(message), reloadTimings: reloadTimings)
    }

    func emit(_ kind: HostEvent.Kind, _ subject: HostEvent.Subject, _ message: HostEvent.Text, reloadTimings: ReloadTimings? = nil) {
        count += 1
        let event = HostEvent(sequence: count, kind: kind, reloadTimings: reloadTimings, subject: subject, messageText: message)
        events.append(event)
        // A long-running host keeps the recent log only.
        if events.count > Self.limit { events.removeFirst(events.count - Self.limit / 2) }
        for (_, observer) in observers { observer(event) }
    }

    func addObserver(_ observer: @escaping (HostEvent) -> Void) -> Int {
        defer { nextToken += 1 }
        observers.append((nextToken, observer))
        return nextToken
    }

    func removeObserver(_ token: Int) {
        observers.removeAll { $0.token == token }
    }

    func clear() {
        events.removeAll()
    }
}
