import BerthSDK

/// The selection a picker flow sends upstream. Any plugin that wants it declares the same
/// name and JSON shape; nothing else is shared.
struct UserSelection: RouteContext {
    static let contextType = "com.example.users.UserSelection"
    let id: String
    let name: String
}

/// The people the picker offers.
let directory: [(id: String, name: String)] = [("ada", "Ada Lovelace"), ("grace", "Grace Hopper"), ("linus", "Linus Torvalds")]

/// Step one: the list. `open ID` pushes the detail screen for that person.
final class UsersScreen: Screen {
    static let route = "users"
    static let actions: [ScreenAction] = [ScreenAction("open", summary: "Pushes the detail screen of user ID (TEXT)")]
    private let context: ScreenContext

    init(context: ScreenContext) {
        self.context = context
    }

    func handle(action: String, payload: [UInt8]) throws {
        let id = String(decoding: payload, as: UTF8.self)
        switch action {
        case "open":
            guard directory.contains(where: { $0.id == id }) else {
                throw BerthError(code: .notFound, message: "no user '\(id)' (\(directory.map(\.id).joined(separator: ", ")))")
            }
            try context.push("user-detail", argument: Array(id.utf8))
        default:
            throw BerthError(code: .notFound, message: "users has no action '\(action)' (\(Self.actions.map(\.name).joined(separator: ", ")))")
        }
    }
}

/// Step two: one person. `choose` ends the flow with `terminate(UserSelection)`.
final class UserDetailScreen: Screen {
    static let route = "user-detail"
    static let actions: [ScreenAction] = [
        ScreenAction("choose", summary: "Ends the flow with this user (terminate)"),
        ScreenAction("preview", summary: "Sends this user upstream without closing"),
    ]
    private let context: ScreenContext
    /// The user this screen shows; nil when it was opened without a known id (it then
    /// says so and offers nothing to choose).
    private let user: (id: String, name: String)?

    init(context: ScreenContext) {
        self.context = context
        let id = String(decoding: context.argument, as: UTF8.self)
        user = directory.first { $0.id == id }
    }

    var body: some View {
        Text(user.map { "\($0.name) (\($0.id))" } ?? "No user: open this screen from the list")
    }

    func handle(action: String, payload: [UInt8]) throws {
        guard let user else { throw BerthError(code: .state, message: "user-detail was opened without a user; nothing to choose") }
        let selection = UserSelection(id: user.id, name: user.name)
        switch action {
        case "choose":
            context.log("picker: \(user.name) chosen (receiver found: \(context.canTerminate(UserSelection.self)))")
            try context.terminate(selection)
        case "preview":
            try context.context(selection)
        default:
            throw BerthError(code: .notFound, message: "user-detail has no action '\(action)' (\(Self.actions.map(\.name).joined(separator: ", ")))")
        }
    }
}

@_cdecl("berth_userpicker_entry_v1")
public func berthUserPickerEntry(_ host: UnsafeRawPointer?, _ plugin: UnsafeRawPointer?) -> UnsafeRawPointer? {
    Plugin(id: "com.example.users", screens: [UsersScreen.self, UserDetailScreen.self]).export(host, plugin)
}
