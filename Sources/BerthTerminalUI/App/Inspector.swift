@_spi(Engine) import BerthRuntime
import Foundation

/// What the inspector reads from the host; `BerthHost` is one.
@MainActor
protocol InspectedHost: AnyObject {
    var launchRouter: Router { get }
    var visibleRouter: Router? { get }
    var stateSlots: [StateSlotInfo] { get }
    var configuration: BerthHost.Configuration { get }
    var plugins: [String: PluginRecord] { get }
    var startedAt: ContinuousClock.Instant { get }
    var events: [HostEvent] { get }
    var scopes: ScopeRegistry { get }
}

extension BerthHost: InspectedHost {}

/// The inspector beside the app (F2): the router tree, the focused view's identity and
/// state slots, the plugins and their workers, and the recent events and output.
struct Inspector {
    /// Whether it is shown.
    var isShown = false
    /// Recent events and captured output lines, oldest first.
    private(set) var log: [String] = []

    /// Keeps `line` (a host event, a command's output, a plugin's log); past 500 lines the
    /// oldest are dropped down to 400.
    mutating func append(_ line: String) {
        log.append(line)
        if log.count > 500 { log.removeFirst(log.count - 400) }
    }

    /// The inspector's lines for a panel `rows` × `columns`: the newest events fill what is
    /// left; longer lines are cut, except the last reload's phases, which wrap.
    @MainActor
    func lines(rows: Int, columns: Int, host: some InspectedHost, focus: FocusTarget?) -> [String] {
        var lines = ["Inspector (F2 closes)", "", "Routers"]
        func visit(_ router: Router, depth: Int) {
            let indent = String(repeating: "  ", count: depth)
            if router.kind == .launch {
                lines.append("\(indent)launch")
            } else {
                let module = router.module
                let generation = module.map { "g\($0.generation.number)" } ?? "-"
                let presented = router.parent.map { router.isPresented(from: $0) } == true ? " ⧉" : ""
                let visible = router === host.visibleRouter ? " ◀" : ""
                lines.append("\(indent)#\(router.id) \(router.route)\(presented) \(generation) \(module?.state.rawValue ?? "-")\(visible)")
            }
            for child in router.children { visit(child, depth: depth + 1) }
        }
        visit(host.launchRouter, depth: 1)

        lines += ["", "Focus"]
        switch focus {
        case .view(let id)?:
            lines.append("  view \(id)")
            if let router = host.visibleRouter {
                let slots = host.stateSlots.filter { $0.identity.instance == router.id && id.hasPrefix($0.identity.path) }
                for slot in slots.suffix(6) {
                    lines.append("  @State \(slot.identity.path)#\(slot.index) = \(Self.slotText(slot.bytes))")
                }
            }
        case .action(let name)?: lines.append("  action \(name)")
        case .route(let route)?: lines.append("  route \(route)")
        case .back?, .option?, nil: lines.append("  (nothing)")
        }

        lines += ["", "Plugins"]
        let isolation = host.configuration.isolation
        for id in host.plugins.keys.sorted() {
            guard let record = host.plugins[id] else { continue }
            var line = "  \(id) \(record.stateName)"
            if let generation = record.generation { line += " g\(generation.number)" }
            lines.append(line)
            // Under it: where it runs (its worker's pid, memory and processor time), what its
            // load cost, when it was activated, and its crash budget; wrapped, so a narrow
            // panel shows them all.
            var detail: [String] = []
            if let generation = record.generation {
                var runs = generation.isolation.rawValue
                if let pid = generation.workerPID {
                    runs += " · pid \(pid)"
                    // Read where its code runs (inside the worker's PID namespace, another pid).
                    let inside = generation.workerPluginPID ?? pid
                    if let memory = Self.residentMemory(inside) { runs += " · \(memory)" }
                    if let cpu = Self.processorTime(inside) { runs += " · cpu \(cpu)" }
                }
                detail.append(runs)
                if let usage = generation.workerUsage(hostMemoryCeiling: isolation.maxPluginMemory) { detail.append(usage.text) }
                let load = generation.loadTimings
                detail.append("load \(Self.milliseconds(load.total)) ms (copy+hash \(Self.milliseconds(load.copyAndHash)) · "
                    + "dlopen \(Self.milliseconds(load.dlopen)) · handshake \(Self.milliseconds(load.handshake)))")
                detail.append("activated \(Self.milliseconds(generation.loadedAt - host.startedAt)) ms after start")
            }
            if isolation.mode(for: record.source.manifest) == .process {
                detail.append("crashes \(record.crashes(within: isolation.crashWindow)) of \(isolation.crashLimit) in \(isolation.crashWindow)")
            }
            for item in detail { lines += Self.wrapped(item, columns: columns) }
        }
        // The last reload, phase by phase (the phases that ran).
        if let reload = host.events.last(where: { $0.kind == .reloaded }) {
            let timings = reload.reloadTimings
            lines.append("  last reload: \(reload.subject)" + (timings.map { " in \(Self.milliseconds($0.total)) ms" } ?? ""))
            if let timings {
                let phases = timings.phases.filter { $0.duration > .zero }.map { "\($0.name) \(Self.milliseconds($0.duration))" }
                lines += Self.wrapped(phases.joined(separator: " · ") + " ms", columns: columns)
            } else {
                lines += Self.wrapped(reload.message, columns: columns)
            }
        }
        // The last crash: its line, then the plugin's own frames, one a line.
        if let crash = host.events.last(where: { $0.kind == .crashed }) {
            lines.append("  last crash: \(crash.subject)")
            let parts = crash.message.components(separatedBy: "; stack: ")
            lines += Self.wrapped(parts[0], columns: columns)
            for (index, frame) in (parts.count > 1 ? parts[1].components(separatedBy: " ← ") : []).enumerated() {
                lines += Self.wrapped((index == 0 ? "in " : "← ") + frame, columns: columns)
            }
        }
        // Contracts: who provides each, and who called it.
        let contracts = host.scopes.contracts
        if !contracts.isEmpty {
            lines += ["", "Services"]
            for contract in contracts {
                lines.append("  \(contract.key) (\(contract.kind))")
                let callers = contract.callers.isEmpty ? "not called yet" : "called by " + contract.callers.joined(separator: ", ")
                lines += Self.wrapped("by \(contract.provider); \(callers)", columns: columns)
            }
        }
        lines += ["", "Events and output"]
        lines += log.suffix(max(rows - lines.count, 3)).map { "  " + $0 }
        return lines
    }

    /// A slot's bytes as text when they read as text, else their count.
    static func slotText(_ bytes: [UInt8]) -> String {
        if bytes.count == 8 { return String(bytes.reversed().reduce(Int64(0)) { $0 << 8 | Int64($1) }) }
        if bytes.count == 1, bytes[0] <= 1 { return bytes[0] == 1 ? "true" : "false" }
        if let text = String(validating: bytes, as: UTF8.self), text.allSatisfy({ !$0.isNewline }) { return "\"\(text)\"" }
        return "\(bytes.count) bytes"
    }

    /// `text` broken to fit the panel, each line indented under its plugin.
    private static func wrapped(_ text: String, columns: Int) -> [String] {
        ViewLayout.wrapped(text, width: max(columns - 4, 10)).rows.map { "    " + String($0.map(\.character)) }
    }

    /// A duration in milliseconds with two decimals (`12.34`); negative ones as 0.
    static func milliseconds(_ duration: Duration) -> String {
        let (seconds, attoseconds) = duration.components
        let hundredths = max(Int(seconds) * 100_000 + Int(attoseconds / 10_000_000_000_000), 0)
        return "\(hundredths / 100).\(hundredths % 100 < 10 ? "0" : "")\(hundredths % 100)"
    }

    /// A process's processor time so far, user and system (`/proc/PID/stat`), as `1.23 s`.
    static func processorTime(_ pid: Int32) -> String? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let afterName = text.lastIndex(of: ")") else { return nil }
        // After the command name: state is field 3; utime and stime are fields 14 and 15.
        let fields = text[text.index(after: afterName)...].split(separator: " ")
        guard fields.count > 12, let user = Int(fields[11]), let system = Int(fields[12]) else { return nil }
        let hundredths = (user + system) * 100 / Int(sysconf(Int32(_SC_CLK_TCK)))
        return "\(hundredths / 100).\(hundredths % 100 < 10 ? "0" : "")\(hundredths % 100) s"
    }

    /// A process's resident memory (`/proc/PID/statm`), as `12.3 MB`.
    static func residentMemory(_ pid: Int32) -> String? {
        guard let text = try? String(contentsOfFile: "/proc/\(pid)/statm", encoding: .utf8) else { return nil }
        let fields = text.split(separator: " ")
        guard fields.count > 1, let pages = Int(fields[1]) else { return nil }
        let bytes = pages * Int(sysconf(Int32(_SC_PAGESIZE)))
        return "\(bytes / (1024 * 1024)).\(bytes % (1024 * 1024) * 10 / (1024 * 1024)) MB"
    }
}

