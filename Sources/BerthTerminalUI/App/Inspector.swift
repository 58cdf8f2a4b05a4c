import BerthRuntime
import Foundation

/// The inspector beside the app (F2): the screen tree, the focused view's identity and
/// state slots, the plugins and their workers, and the recent events and output, all read
/// from the host's value API (snapshots of screens, plugins and contracts, and its events).
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
    func lines(rows: Int, columns: Int, host: BerthHost, focus: FocusTarget?) -> [String] {
        var lines = ["Inspector (F2 closes)", "", "Routers", "  launch"]
        let visibleID = host.visibleScreen?.id
        // `screens` is in tree order, each screen after the one it was pushed on or presented
        // from: its depth is one more than that screen's (the launch stack's root: 2).
        var depths: [Int: Int] = [:]
        for screen in host.screens {
            let depth = screen.parent.flatMap { depths[$0] }.map { $0 + 1 } ?? 2
            depths[screen.id] = depth
            let indent = String(repeating: "  ", count: depth)
            let generation = screen.generation.map { "g\($0)" } ?? "-"
            let state = screen.generation == nil ? "-" : screen.state.rawValue
            let presented = screen.presented ? " ⧉" : ""
            let visible = screen.id == visibleID ? " ◀" : ""
            lines.append("\(indent)#\(screen.id) \(screen.route.name)\(presented) \(generation) \(state)\(visible)")
        }

        lines += ["", "Focus"]
        switch focus {
        case .view(let id)?:
            lines.append("  view \(id)")
            if let visibleID {
                let slots = host.stateSlots.filter { $0.identity.instance == visibleID && id.hasPrefix($0.identity.path) }
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
        // Measured: its worker's memory and processor time, read from the kernel.
        for plugin in host.pluginSnapshots(measuringUse: true) {
            var line = "  \(plugin.id) \(plugin.state)"
            if let generation = plugin.generation { line += " g\(generation)" }
            lines.append(line)
            // Under it: where it runs (its worker's pid, memory and processor time), what its
            // load cost, when it was activated, and its crash budget; wrapped, so a narrow
            // panel shows them all.
            var detail: [String] = []
            if let placement = plugin.placement {
                switch placement {
                case .inProcess:
                    detail.append(IsolationMode.inProcess.rawValue)
                case .worker(let pid, _):
                    // Memory and processor time are those of where its code runs (inside the
                    // worker's PID namespace, another pid).
                    var runs = IsolationMode.process.rawValue + " · pid \(pid)"
                    if let memory = plugin.residentMemory { runs += " · \(Self.megabytes(memory))" }
                    if let cpu = plugin.processorTime { runs += " · cpu \(Self.seconds(cpu))" }
                    detail.append(runs)
                }
                if let usage = plugin.use { detail.append(usage.text) }
            }
            if let load = plugin.loadTimings {
                detail.append("load \(Self.milliseconds(load.total)) ms (copy+hash \(Self.milliseconds(load.copyAndHash)) · "
                    + "dlopen \(Self.milliseconds(load.dlopen)) · handshake \(Self.milliseconds(load.handshake)))")
            }
            if let loadedAt = plugin.loadedAt {
                detail.append("activated \(Self.milliseconds(loadedAt - host.startedAt)) ms after start")
            }
            if plugin.isolation == .process {
                detail.append("crashes \(plugin.crashes) of \(isolation.crashLimit) in \(isolation.crashWindow)")
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
        let contracts = host.contracts
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

    /// Processor time in seconds with two decimals, cut not rounded (`1.23 s`).
    static func seconds(_ duration: Duration) -> String {
        let (seconds, attoseconds) = duration.components
        let hundredths = max(Int(seconds) * 100 + Int(attoseconds / 10_000_000_000_000_000), 0)
        return "\(hundredths / 100).\(hundredths % 100 < 10 ? "0" : "")\(hundredths % 100) s"
    }

    /// Bytes in mebibytes with one decimal, cut not rounded (`12.3 MB`).
    static func megabytes(_ bytes: UInt64) -> String {
        let mebibyte: UInt64 = 1024 * 1024
        return "\(bytes / mebibyte).\(bytes % mebibyte * 10 / mebibyte) MB"
    }
}

