public import BerthRuntime
import Foundation

/// The one place the web front end talks to the host: it turns the host into the page's
/// values (`WebState`) and a page's typed commands (`WebCommand`) into host calls. Every
/// call into BerthRuntime the web front end makes is in this file, and each is the host's
/// value API (Docs/embedding.md): snapshots of screens and plugins, operations by screen
/// number, and the one sequence of changes and events.
@MainActor
public final class WebHostAdapter {
    private let host: BerthHost
    /// The task reading `host.changes`, while observing.
    private var feed: Task<Void, Never>?

    /// An adapter over `host`; nothing is observed until `observe(changes:events:)`.
    public init(host: BerthHost) {
        self.host = host
    }

    /// Calls `changed` after every outermost host operation (a task's tick, a delegate
    /// action, a route context, a reload, a crash) and `event` for each new event, in the
    /// host's order, from `host.changes`, until `stopObserving()` or the host's shutdown.
    func observe(changes changed: @escaping @MainActor () -> Void, events event: @escaping @MainActor (WebEvent) -> Void) {
        stopObserving()
        let changes = host.changes
        feed = Task { @MainActor in
            for await change in changes {
                switch change {
                case .changed: changed()
                case .event(let hostEvent): event(Self.webEvent(hostEvent))
                }
            }
        }
    }

    /// Stops reading the sequence `observe` started.
    func stopObserving() {
        feed?.cancel()
        feed = nil
    }

    /// The events so far (the newest `WebState.eventLimit`).
    func events() async -> [WebEvent] {
        host.events.suffix(WebState.eventLimit).map(Self.webEvent)
    }

    /// The first plugin that was refused or failed at the start and is not loaded now, as
    /// the banner's text with how many others there are; nil when every plugin loaded.
    func startupProblem() async -> WebBanner? {
        var seen = Set<String>()
        let problems = host.events.filter { event in
            guard event.kind == .failed || event.kind == .rejected else { return false }
            switch event.subject {
            case .plugin(let id): return host.pluginSnapshot(id)?.generation == nil && seen.insert(id).inserted
            case .folder(let path): return seen.insert(path).inserted
            default: return false
            }
        }
        guard let first = problems.first else { return nil }
        let others = problems.count - 1
        let more = others == 0 ? "" : " (and \(others) other plugin\(others == 1 ? "" : "s"): see the inspector)"
        return WebBanner(sequence: first.sequence, text: "did not load: \(first.subject): \(first.message)\(more)")
    }

    /// The workers' memory and processor time read last (by pid), so that a snapshot made
    /// for a person's input does not read /proc for every plugin.
    private var figures: [Int32: (memory: Int?, cpuMilliseconds: Int?)] = [:]

    /// The host as the page shows it, without events and banner (the session keeps those);
    /// `refreshFigures` reads the workers' memory and processor time again.
    func snapshot(refreshFigures: Bool = false) async -> WebState {
        var state = WebState()
        var chain = host.visibleScreens
        // A screen reopened under a modal (by a reload) has no tree until it renders once.
        let unrendered = chain.dropLast().filter { $0.rendersViews && $0.state == .active && $0.tree == nil }
        for screen in unrendered { _ = try? await host.renderOnLane(screen: screen.id) }
        if !unrendered.isEmpty { chain = host.visibleScreens }
        state.screens = chain.map { screen in
            WebScreen(
                id: screen.id, route: screen.route.description, plugin: screen.plugin, title: screen.title, presented: screen.presented,
                state: screen.state.rawValue,
                // Its plugin is in a call on its lane (Docs/lanes.md): input waits.
                busy: screen.busy, tree: screen.tree.map(Self.webNode), actions: screen.actions.map { WebAction(name: $0.name, summary: $0.summary) }
            )
        }
        if !chain.isEmpty {
            let frontStart = chain.indices.last { state.screens[$0].presented } ?? 0
            state.back = chain.count - frontStart > 1 ? "back" : frontStart > 0 ? "dismiss" : "close"
        }
        let plugins = host.pluginSnapshots()
        state.routes = plugins.flatMap { $0.routes.map(\.description) }
        let isolation = host.configuration.isolation
        state.plugins = plugins.map { snapshot in
            var plugin = WebPlugin(id: snapshot.id, version: snapshot.version.description, state: snapshot.state)
            plugin.generation = snapshot.generation
            switch snapshot.placement {
            case .inProcess?:
                plugin.runs = IsolationMode.inProcess.rawValue
            case .worker(let pid, _)?:
                plugin.runs = IsolationMode.process.rawValue
                plugin.pid = pid
                if refreshFigures || figures[pid] == nil, let measured = host.pluginSnapshot(snapshot.id, measuringUse: true) {
                    figures[pid] = (measured.use?.memoryBytes.map { Int($0) }, measured.processorTime.map(ProcessFigures.milliseconds))
                }
                plugin.memory = figures[pid]?.memory
                plugin.cpuMilliseconds = figures[pid]?.cpuMilliseconds
                let hostLimit = isolation.maxPluginMemory
                plugin.memoryLimit = [snapshot.limits.memory, hostLimit == 0 ? nil : hostLimit].compactMap { $0 }.min()
            case nil:
                break
            }
            if snapshot.isolation == .process {
                plugin.crashes = snapshot.crashes
                plugin.crashLimit = isolation.crashLimit
                plugin.crashWindowSeconds = Int(isolation.crashWindow.components.seconds)
            }
            return plugin
        }
        if let reload = host.events.last(where: { $0.kind == .reloaded }), case .plugin(let id) = reload.subject {
            let phases = reload.reloadTimings?.phases.filter { $0.duration > .zero } ?? []
            state.reload = WebReload(plugin: id, message: reload.message,
                                     phases: phases.map { WebPhase(name: $0.name, milliseconds: ProcessFigures.fractionalMilliseconds($0.duration)) })
        }
        return state
    }

    /// Performs a page's command on the host.
    func perform(_ command: WebCommand) async throws(WebCommandError) {
        do {
            switch command {
            case .open(let route, let argument): try await host.openScreen(route, argument: Array(argument.utf8))
            case .present(let route): try await host.openScreen(route, presented: true)
            case .back: try await host.userBackOnLane()
            case .dismiss: try await host.userDismissOnLane()
            case .close:
                guard let screen = host.visibleScreen else { throw WebCommandError("no screen is open") }
                try await host.closeScreenOnLane(screen.id)
            case .input(let screen, let view, let input):
                guard host.screen(screen) != nil else { throw WebCommandError("screen \(screen) is not open") }
                _ = try await host.input(input, view: view, screen: screen)
            case .action(let screen, let name, let text):
                guard host.screen(screen) != nil else { throw WebCommandError("screen \(screen) is not open") }
                try await host.send(screen: screen, action: name, payload: Array(text.utf8))
            case .reload(let plugin):
                _ = try await host.reloadOffMain(plugin, keepState: true)
            case .dismissBanner:
                break
            }
        } catch let error as WebCommandError {
            throw error
        } catch {
            throw WebCommandError("\(error)")
        }
    }

    private static func webNode(_ node: ViewNode) -> WebViewNode {
        WebViewNode(type: node.type, id: node.id, fields: node.fields, children: node.children.map(webNode))
    }

    private static func webEvent(_ event: HostEvent) -> WebEvent {
        WebEvent(sequence: event.sequence, kind: event.kind.rawValue, subject: event.subject.description, message: event.message)
    }
}

/// Durations as the page shows them.
enum ProcessFigures {
    static func milliseconds(_ duration: Duration) -> Int {
        Int(duration.components.seconds) * 1000 + Int(duration.components.attoseconds / 1_000_000_000_000_000)
    }

    static func fractionalMilliseconds(_ duration: Duration) -> Double {
        ((Double(duration.components.seconds) * 1000 + Double(duration.components.attoseconds) / 1e15) * 100).rounded() / 100
    }
}
