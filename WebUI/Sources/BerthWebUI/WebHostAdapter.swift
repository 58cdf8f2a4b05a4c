public import BerthRuntime
import Foundation

/// The one place the web front end talks to the host: it turns the host into the page's
/// values (`WebState`) and a page's typed commands (`WebCommand`) into host calls. Every
/// call into BerthRuntime the web front end makes is in this file, so that moving to the
/// host's value API (snapshots, async operations, one sequence of changes) changes this
/// file only. Its operations are `async` already for that reason.
@MainActor
public final class WebHostAdapter {
    private let host: BerthHost
    private var changeToken: Int?
    private var eventToken: Int?

    /// An adapter over `host`; nothing is observed until `observe(changes:events:)`.
    public init(host: BerthHost) {
        self.host = host
    }

    /// Calls `changed` after every outermost host operation (a task's tick, a delegate
    /// action, a route context, a reload, a crash) and `event` for each new event, until
    /// `stopObserving()`. Neither may call the host from inside: schedule the work.
    func observe(changes changed: @escaping @MainActor () -> Void, events event: @escaping @MainActor (WebEvent) -> Void) {
        stopObserving()
        changeToken = host.addChangeObserver { changed() }
        eventToken = host.addEventObserver { hostEvent in event(Self.webEvent(hostEvent)) }
    }

    /// Stops the observers `observe` installed.
    func stopObserving() {
        if let changeToken { host.removeChangeObserver(changeToken) }
        if let eventToken { host.removeEventObserver(eventToken) }
        changeToken = nil
        eventToken = nil
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
            case .plugin(let id): return host.plugins[id]?.generation == nil && seen.insert(id).inserted
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
        var chain: [Router] = []
        var current = host.visibleRouter
        while let router = current, router.kind == .screen {
            chain.append(router)
            current = router.parent
        }
        chain.reverse()
        // A screen reopened under a modal (by a reload) has no tree until it renders once.
        for router in chain where router !== host.visibleRouter {
            if let module = router.module, module.canRender, module.isActive, module.lastTree == nil {
                _ = try? host.render(screen: router.id)
            }
        }
        state.screens = chain.enumerated().map { index, router in
            let presented = index > 0 && router.isPresented(from: chain[index - 1])
            let tree = router.module.flatMap { $0.canRender ? $0.lastTree : nil }
            return WebScreen(
                id: router.id, route: router.qualifiedRoute.description, plugin: router.pluginID,
                title: tree?.screenTitle, presented: presented, state: router.module?.state.rawValue ?? "closed",
                // Its plugin is in a call on its lane (Docs/lanes.md): input waits.
                busy: router.module?.isBusy ?? false,
                tree: tree?.root.map(Self.webNode), actions: host.declaredActions(of: router).map { WebAction(name: $0.name, summary: $0.summary) }
            )
        }
        if !chain.isEmpty {
            let frontStart = chain.indices.last { state.screens[$0].presented } ?? 0
            state.back = chain.count - frontStart > 1 ? "back" : frontStart > 0 ? "dismiss" : "close"
        }
        state.routes = host.plugins.keys.sorted().flatMap { id in
            host.plugins[id].map { record in record.source.manifest.routes.map { Route(plugin: id, name: $0).description } } ?? []
        }
        let isolation = host.configuration.isolation
        state.plugins = host.plugins.keys.sorted().compactMap { id in
            guard let record = host.plugins[id] else { return nil }
            let manifest = record.source.manifest
            var plugin = WebPlugin(id: id, version: manifest.version.description, state: record.stateName)
            if let generation = record.generation {
                plugin.generation = generation.number
                plugin.runs = generation.isolation.rawValue
                plugin.pid = generation.workerPID
                if let pid = generation.workerPID {
                    if refreshFigures || figures[pid] == nil {
                        figures[pid] = (ProcessFigures.residentBytes(pid), generation.workerProcessorTime.map(ProcessFigures.milliseconds))
                    }
                    plugin.memory = figures[pid]?.memory
                    plugin.cpuMilliseconds = figures[pid]?.cpuMilliseconds
                    let hostLimit = isolation.maxPluginMemory
                    let limits = [manifest.limits.memory, hostLimit == 0 ? nil : hostLimit].compactMap { $0 }
                    plugin.memoryLimit = limits.min()
                }
            }
            if isolation.mode(for: manifest) == .process {
                plugin.crashes = record.crashes(within: isolation.crashWindow)
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
            case .open(let route, let argument): try await host.open(route, argument: Array(argument.utf8))
            case .present(let route): try await host.open(route, presented: true)
            case .back: try host.userBack()
            case .dismiss: try host.userDismiss()
            case .close:
                guard let router = host.visibleRouter else { throw WebCommandError("no screen is open") }
                host.close(router)
            case .input(let screen, let view, let input):
                guard host.router(screen)?.module != nil else { throw WebCommandError("screen \(screen) is not open") }
                _ = try await host.input(input, view: view, screen: screen)
            case .action(let screen, let name, let text):
                guard host.router(screen)?.module != nil else { throw WebCommandError("screen \(screen) is not open") }
                try await host.send(screen: screen, action: name, payload: Array(text.utf8))
            case .reload(let plugin):
                _ = try host.reload(plugin, keepState: true)
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

/// A worker's figures from /proc.
enum ProcessFigures {
    /// Resident memory in bytes (`/proc/PID/statm`).
    static func residentBytes(_ pid: Int32) -> Int? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/statm", encoding: .utf8) else { return nil }
        let fields = text.split(separator: " ")
        guard fields.count > 1, let pages = Int(fields[1]) else { return nil }
        return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
    }

    static func milliseconds(_ duration: Duration) -> Int {
        Int(duration.components.seconds) * 1000 + Int(duration.components.attoseconds / 1_000_000_000_000_000)
    }

    static func fractionalMilliseconds(_ duration: Duration) -> Double {
        ((Double(duration.components.seconds) * 1000 + Double(duration.components.attoseconds) / 1e15) * 100).rounded() / 100
    }
}
