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

/// The same flow with the view-level form: the observer exists while the view that declares
/// it is rendered, and goes away when a render no longer contains it (`mute`).
final class ProfileCardScreen: Screen {
    static let route = "profile-card"
    private let context: ScreenContext
    private var selected: UserSelection?
    private var listening = true

    init(context: ScreenContext) {
        self.context = context
    }

    var body: some View {
        if listening {
            VStack {
                Text("Card: \(selected?.name ?? "nobody")")
            }
            .routerContext(UserSelection.self) { [unowned self] selection in
                selected = selection
                context.log("card shows \(selection.name)")
            }
        } else {
            Text("Card: not listening")
        }
    }

    func handle(action: String, payload: [UInt8]) throws {
        switch action {
        case "pick": try context.present("com.example.users/users")
        case "mute": listening = false
        default: throw BerthError(code: .notFound, message: "profile-card has no action '\(action)' (pick, mute)")
        }
    }
}

@_cdecl("berth_profile_entry_v1")
public func berthProfileEntry(_ host: UnsafeRawPointer?, _ plugin: UnsafeRawPointer?) -> UnsafeRawPointer? {
    Plugin(id: "com.example.profile", screens: [ProfileScreen.self, ProfileCardScreen.self]).export(host, plugin)
}
