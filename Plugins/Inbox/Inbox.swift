import BerthSDK

/// The inbox: opens child flows and hears back from them on their delegate channels.
/// `compose` presents this plugin's compose screen; `greet` pushes the C Greeter's hello
/// screen (another plugin, another language) and observes it the same way.
final class InboxScreen: Screen {
    static let route = "inbox"
    static let actions: [ScreenAction] = [
        ScreenAction("compose", summary: "Presents the compose screen and hears what it sends"),
        ScreenAction("greet", summary: "Pushes the C Greeter's hello screen and hears its waves"),
        ScreenAction("list", summary: "Logs the messages received"),
        // Declared so the demonstration can be sent from the shell; the host refuses the push.
        ScreenAction("push-from-task", summary: "Navigates from a Swift Task, breaking the thread rule on purpose"),
        ScreenAction("rotate", summary: "Moves the first row to the end (row state follows its id)"),
    ]

    private let context: ScreenContext
    private var messages: [String] = []
    /// Rows shown in the list; `rotate` reorders them (row state follows the id).
    private var rows: [Row] = [Row(id: "welcome", text: "Welcome to Berth"), Row(id: "tips", text: "Try tap, toggle, type and step")]

    struct Row: Identifiable {
        let id: String
        let text: String
    }

    /// The screen's title, a bold coloured count, the rows, a rule, and a bordered panel
    /// with a picker (modifiers change no identity: the rows' state paths stay as they were).
    var body: some View {
        VStack {
            Text("Inbox · \(messages.count) message(s)").bold().foregroundStyle(.cyan)
            Badge(label: "unread")
            List {
                ForEach(rows) { row in
                    MessageRow(text: row.text)
                }
            }
            Divider()
            FilingPanel()
        }
        .title("Inbox")
    }

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
        case "push-from-task":
            // Breaks the thread rule on purpose: navigation from a Swift Task, not from the
            // host's call. The host must refuse it (and survive).
            let context = self.context
            Task.detached {
                do {
                    try context.push("compose")
                    Plugin.log("push from a task was accepted")
                } catch {
                    Plugin.log("push from a task was refused: \(error)")
                }
            }
        case "rotate":
            rows = Array(rows.dropFirst()) + rows.prefix(1)
        default:
            throw BerthError(code: .notFound, message: "inbox has no action '\(action)' (\(Self.actions.map(\.name).joined(separator: ", ")))")
        }
    }

    func delegate(from child: ScreenID, action: String, payload: [UInt8]) throws {
        let text = String(decoding: payload, as: UTF8.self)
        switch action {
        case "sent":
            messages.append(text)
            rows.append(Row(id: "message-\(messages.count)", text: text))
            context.log("inbox received '\(text)' from screen \(child)")
        case "waved":
            messages.append("greeter: \(text)")
            context.log("inbox heard the greeter: \(text)")
        default:
            context.log("inbox ignores delegate action '\(action)'", level: .debug)
        }
    }
}

/// One message with a star that belongs to the row (its identity is the row's id).
struct MessageRow: View {
    let text: String
    @State var starred = false

    var body: some View {
        HStack {
            Toggle("★", isOn: $starred)
            Text(text)
        }
    }
}

/// Where new mail is filed: a picker whose selection is view state, in a bordered,
/// padded group, over a line with a Spacer between its two ends.
struct FilingPanel: View {
    static let folders = ["Inbox", "Archive", "Spam"]
    @State var folder = 0

    var body: some View {
        VStack {
            Picker("File new mail in", selection: $folder, options: Self.folders)
            HStack {
                Text("filed in \(Self.folders[min(max(folder, 0), Self.folders.count - 1)])").italic()
                Spacer()
                Text("\(Self.folders.count) folders").dim()
            }
        }
        .padding(1)
        .border()
    }
}

/// A counter of taps. Counter has a view with the same name; their states never meet.
struct Badge: View {
    let label: String
    @State var taps = 0

    var body: some View {
        Button("\(label): \(taps)") { taps += 1 }
    }
}

/// The compose flow: type a draft, send it up the delegate channel, and close itself.
final class ComposeScreen: Screen {
    static let route = "compose"
    static let actions: [ScreenAction] = [
        ScreenAction("type", summary: "Replaces the draft with TEXT"),
        ScreenAction("send", summary: "Sends the draft to the opener and closes"),
        ScreenAction("cancel", summary: "Closes without sending"),
    ]

    private let context: ScreenContext
    /// Created with the screen, outside any render: a plain local box, not host state.
    @State private var draft = ""

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
            throw BerthError(code: .notFound, message: "compose has no action '\(action)' (\(Self.actions.map(\.name).joined(separator: ", ")))")
        }
    }
}

@_cdecl("berth_inbox_entry_v1")
public func berthInboxEntry(_ host: UnsafeRawPointer?, _ plugin: UnsafeRawPointer?) -> UnsafeRawPointer? {
    Plugin(id: "com.example.inbox", screens: [InboxScreen.self, ComposeScreen.self]).export(host, plugin)
}
