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
        var firstBySubject: [HostEvent.Subject: HostEvent] = [:]
        var order: [HostEvent.Subject] = []
        for event in events where event.kind == .failed || event.kind == .rejected {
            if case .plugin(let id) = event.subject, isLoaded(id) { continue }
            guard firstBySubject[event.subject] == nil else { continue }
            firstBySubject[event.subject] = event
            order.append(event.subject)
        }
        guard let first = order.first, let event = firstBySubject[first] else {
            banner = nil
            return
        }
        let others = order.count - 1
        let more = others == 0 ? "" : " (and \(others) other plugin\(others == 1 ? "" : "s"): F2)"
        banner = "did not load: \(event.subject): \(event.message)\(more)"
    }
}
