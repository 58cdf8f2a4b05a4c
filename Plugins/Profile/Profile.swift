import BerthSDK

/// The same context type as the picker's: same name, same JSON.
struct UserSelection: RouteContext {
    static let contextType = "com.example.users.UserSelection"
    let id: String
    let name: String
}

/// A profile that asks another plugin's picker for a user and shows the answer.
final class ProfileScreen: Screen {
    static let route = "profile"
    private let context: ScreenContext
    private var selected: UserSelection?

    init(context: ScreenContext) throws {
        self.context = context
        // Registered once per screen; the host drops it when this screen closes.
        try context.addContext(UserSelection.self) { [unowned self] selection in
            selected = selection
            context.log("profile shows \(selection.name)")
        }
    }

    func handle(action: String, payload: [UInt8]) throws {
        switch action {
        case "pick": try context.present("com.example.users/users")
        case "pick-inline": try context.push("com.example.users/users")
        case "forget": try context.removeContext(UserSelection.self)
        case "show": context.log("profile: \(selected?.name ?? "nobody selected")")
        default: throw BerthError(code: .notFound, message: "profile has no action '\(action)' (pick, pick-inline, forget, show)")
        }
    }
}

@_cdecl("berth_profile_entry_v1")
public func berthProfileEntry(_ host: UnsafeRawPointer?, _ plugin: UnsafeRawPointer?) -> UnsafeRawPointer? {
    Plugin(id: "com.example.profile", screens: [ProfileScreen.self]).export(host, plugin)
}
