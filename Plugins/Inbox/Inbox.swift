import BerthSDK

/// The inbox: opens child flows and hears back from them on their delegate channels.
/// `compose` presents this plugin's compose screen; `greet` pushes the C Greeter's hello
/// screen (another plugin, another language) and observes it the same way.
final class InboxScreen: Screen {
    static let route = "inbox"

    private let context: ScreenContext
    private var messages: [String] = []

    init(context: ScreenContext) {
        self.context = context
    }

    func handle(action: String, payload: [UInt8]) throws {
        switch action {
        case "compose":
            try context.observeDelegate(of: try context.present("compose"))
        case "greet":
            try context.observeDelegate(of: try context.push("com.example.greeter/hello"))
        case "list":
            context.log("inbox: \(messages.count) message(s): \(messages.joined(separator: " | "))")
        default:
            throw BerthError(code: .notFound, message: "inbox has no action '\(action)' (compose, greet, list)")
        }
    }

    func delegate(from child: ScreenID, action: String, payload: [UInt8]) throws {
        let text = String(decoding: payload, as: UTF8.self)
        switch action {
        case "sent":
            messages.append(text)
            context.log("inbox received '\(text)' from screen \(child)")
        case "waved":
            messages.append("greeter: \(text)")
            context.log("inbox heard the greeter: \(text)")
        default:
            context.log("inbox ignores delegate action '\(action)'", level: .debug)
        }
    }
}

/// The compose flow: type a draft, send it up the delegate channel, and close itself.
final class ComposeScreen: Screen {
    static let route = "compose"

    private let context: ScreenContext
    private var draft = ""

    init(context: ScreenContext) {
        self.context = context
    }

    func handle(action: String, payload: [UInt8]) throws {
        switch action {
        case "type":
            draft = String(decoding: payload, as: UTF8.self)
        case "send":
            try context.sendDelegate("sent", payload: Array(draft.utf8))
            try context.dismiss()
        case "cancel":
            try context.dismiss()
        default:
            throw BerthError(code: .notFound, message: "compose has no action '\(action)' (type, send, cancel)")
        }
    }
}

@_cdecl("berth_inbox_entry_v1")
public func berthInboxEntry(_ host: UnsafeRawPointer?, _ plugin: UnsafeRawPointer?) -> UnsafeRawPointer? {
    Plugin(id: "com.example.inbox", screens: [InboxScreen.self, ComposeScreen.self]).export(host, plugin)
}
