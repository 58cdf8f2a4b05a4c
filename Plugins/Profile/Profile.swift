import BerthSDK
import GreeterService
import Synchronization

/// The same context type as the picker's: same name, same JSON.
struct UserSelection: RouteContext {
    static let contextType = "com.example.users.UserSelection"
    let id: String
    let name: String
}

/// A profile that asks another plugin's picker for a user and shows the answer.
final class ProfileScreen: Screen {
    static let route = "profile"
    static let actions: [ScreenAction] = [
        ScreenAction("pick", summary: "Presents the user picker"),
        ScreenAction("pick-inline", summary: "Pushes the user picker on this stack"),
        ScreenAction("forget", summary: "Stops observing the selection"),
        ScreenAction("show", summary: "Logs the selected user"),
        ScreenAction("request", summary: "Resolves a request-scoped service twice"),
        ScreenAction("session", summary: "Logs the current user session"),
        ScreenAction("greet", summary: "Greets the selected user through the Greeter's service"),
    ]
    private let context: ScreenContext
    private var selected: UserSelection?

    /// This screen's own image cache (screen scope): released when the screen closes.
    private var cache: ImageCache?

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
        case "request":
            // Request-scoped: one instance for this action, a new one for the next.
            let first = try context.resolve(RequestProbe.self)
            let again = try context.resolve(RequestProbe.self)
            context.log("request probe #\(first.number) (same within the action: \(first === again))")
        case "session":
            // Session-scoped: the same instance for every screen until `session end`.
            let session = try context.resolve(UserSession.self)
            context.log("profile is in user session #\(session.number)")
        case "greet":
            // Another plugin's service, through the C table its shared header declares.
            let instance = try context.resolveService(GREETER_GREETING_SERVICE_KEY)
            let functions = instance.assumingMemoryBound(to: greeter_greeting_instance.self).pointee.functions.pointee
            guard let greet = functions.greet, let line = greet(instance, selected?.name ?? "stranger") else {
                throw BerthError(code: .failed, message: "the greeting service gave no greeting")
            }
            context.log("profile: \(String(cString: line))")
        default: throw BerthError(code: .notFound, message: "profile has no action '\(action)' (\(Self.actions.map(\.name).joined(separator: ", ")))")
        }
    }
}

/// The same flow with the view-level form: the observer exists while the view that declares
/// it is rendered, and goes away when a render no longer contains it (`mute`).
final class ProfileCardScreen: Screen {
    static let route = "profile-card"
    static let actions: [ScreenAction] = [
        ScreenAction("pick", summary: "Presents the user picker"),
        ScreenAction("mute", summary: "Stops rendering the view that observes the selection"),
    ]
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
        default: throw BerthError(code: .notFound, message: "profile-card has no action '\(action)' (\(Self.actions.map(\.name).joined(separator: ", ")))")
        }
    }
}

extension ProfileScreen {
    func activate() throws {
        let cache = try context.resolve(ImageCache.self)
        self.cache = cache
        context.log("profile uses image cache #\(cache.number)")
    }
}

/// Numbers instances, to show which one a scope hands out.
private let instancesMade = Atomic<Int>(0)

/// A screen-scoped service: one per open profile screen.
final class ImageCache {
    let number = instancesMade.add(1, ordering: .relaxed).newValue
    deinit { Plugin.log("image cache #\(number) released") }
}

/// A request-scoped service: one per action.
final class RequestProbe {
    let number = instancesMade.add(1, ordering: .relaxed).newValue
}

/// A session-scoped service: shared by every screen of the session.
final class UserSession {
    let number = instancesMade.add(1, ordering: .relaxed).newValue
    deinit { Plugin.log("user session #\(number) released") }
}

@_cdecl("berth_profile_entry_v1")
public func berthProfileEntry(_ host: UnsafeRawPointer?, _ plugin: UnsafeRawPointer?) -> UnsafeRawPointer? {
    Plugin(
        id: "com.example.profile",
        screens: [ProfileScreen.self, ProfileCardScreen.self],
        services: [
            .scoped(ImageCache.self, .screen) { ImageCache() },
            .scoped(UserSession.self, .session) { UserSession() },
            .scoped(RequestProbe.self, .request) { RequestProbe() },
        ]
    ).export(host, plugin)
}
