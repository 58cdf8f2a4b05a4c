extension HostEvent {
    /// An event's subject or message as emitted, formatted only when read: logging a
    /// context dispatch then builds no string.
    enum Text: Sendable {
        case plain(String)
        /// "screen 7"
        case screen(Int)
        /// "context T → screen(s) 9, 8, 4"
        case contextDelivered(type: String, receivers: ContextReceivers)

        var formatted: String {
            switch self {
            case .plain(let text):
                return text
            case .screen(let id):
                return "screen \(id)"
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
            }
        }
    }
}
