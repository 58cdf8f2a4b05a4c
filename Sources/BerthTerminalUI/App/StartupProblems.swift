import BerthRuntime

/// What went wrong before the front end took over the terminal: the plugins that were
/// refused or failed to load at startup, whose lines scrolled by on the terminal the full
/// screen then covered. The front end shows it as its banner until Esc.
struct StartupProblems {
    /// The first problem's line, then how many other plugins have one.
    let banner: String?

    /// From the host's events so far; a plugin loaded by now (a later attempt worked) is
    /// left out.
    init(events: [HostEvent], isLoaded: (String) -> Bool) {
        var subjects = Set<HostEvent.Subject>()
        let problems = events.filter { event in
            guard event.kind == .failed || event.kind == .rejected else { return false }
            switch event.subject {
            case .plugin(let id) where isLoaded(id): return false
            case .plugin, .folder: return subjects.insert(event.subject).inserted
            default: return false  // a screen, the host, the watcher …
            }
        }
        guard let event = problems.first else {
            banner = nil
            return
        }
        let others = problems.count - 1
        let more = others == 0 ? "" : " (and \(others) other plugin\(others == 1 ? "" : "s"): F2)"
        banner = "did not load: \(event.subject): \(event.message)\(more)"
    }
}
