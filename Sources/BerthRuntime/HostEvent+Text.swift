@_spi(Engine) import BerthCore
extension HostEvent {
    /// An event's message as emitted, formatted only when read: logging a
    /// context dispatch then builds no string.
    enum Text: Sendable {
        case plain(String)
        /// "context T → screen(s) 9, 8, 4"
        case contextDelivered(type: String, receivers: ContextReceivers)
        /// "generation 3 → 4 in 2.84 ms, 3 screen(s) reopened (validate 0.05, … ms)", from the
        /// event's `reloadTimings` (kept once, in the event).
        case reloaded(from: Int, to: Int, screens: Int)

        func formatted(timings: ReloadTimings?) -> String {
            switch self {
            case .plain(let text):
                return text
            case .contextDelivered(let type, let receivers):
                var message = "context "
                message.reserveCapacity(24 + type.utf8.count + receivers.count * 8)
                message += type
                message += " → screen(s) "
                for (position, receiver) in receivers.enumerated() {
                    if position > 0 { message += ", " }
                    message += String(receiver)
                }
                return message
            case .reloaded(let from, let to, let screens):
                let timings = timings ?? ReloadTimings()
                let phases = timings.phases.map { "\($0.name) \(BerthHost.milliseconds($0.duration))" }.joined(separator: ", ")
                return "generation \(from) → \(to) in \(BerthHost.milliseconds(timings.total)) ms, \(screens) screen(s) reopened (\(phases) ms)"
            }
        }
    }
}
