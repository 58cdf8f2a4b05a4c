import BerthRuntime
import Foundation

/// The inspector beside the app (F2): the router tree, the focused view's identity and
/// state slots, the plugins and their workers, and the recent events and output.
extension TerminalApp {
    /// The inspector's lines for a panel `rows` × `columns`: the newest events fill what is
    /// left; longer lines are cut, except the last reload's phases, which wrap.
    func inspectorLines(rows: Int, columns: Int) -> [String] {
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
        let key = visibleKey
        switch focus[key] {
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
        for id in host.plugins.keys.sorted() {
            guard let record = host.plugins[id] else { continue }
            var line = "  \(id) \(record.stateName)"
            if let generation = record.generation {
                line += " g\(generation.number) \(generation.isolation.rawValue)"
                if let pid = generation.workerPID {
                    line += " pid \(pid)"
                    if let memory = Self.residentMemory(pid) { line += " \(memory)" }
                    if let cpu = Self.processorTime(pid) { line += " cpu \(cpu)" }
                }
            }
            lines.append(line)
        }
        // The last reload's event names its phases (validate, copy+hash, dlopen, …).
        if let reload = host.events.last(where: { $0.kind == .reloaded }) {
            lines.append("  last reload: \(reload.subject)")
            lines += ViewLayout.wrapped(reload.message, width: max(columns - 4, 10)).rows.map { "    " + String($0.map(\.character)) }
        }
        lines += ["", "Events and output"]
        lines += log.suffix(max(rows - lines.count, 3)).map { "  " + $0 }
        return lines
    }

    /// A slot's bytes as text when they read as text, else their count.
    private static func slotText(_ bytes: [UInt8]) -> String {
        if bytes.count == 8 { return String(bytes.reversed().reduce(Int64(0)) { $0 << 8 | Int64($1) }) }
        if bytes.count == 1, bytes[0] <= 1 { return bytes[0] == 1 ? "true" : "false" }
        if let text = String(validating: bytes, as: UTF8.self), text.allSatisfy({ !$0.isNewline }) { return "\"\(text)\"" }
        return "\(bytes.count) bytes"
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

