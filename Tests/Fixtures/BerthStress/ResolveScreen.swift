import BerthSDK

/// Resolves a cached service many times in one action, for the scoped-resolve benchmarks:
/// "screen N" resolves the screen-scoped `ScreenResolved` N times, "session N" the
/// session-scoped `SessionResolved` N times (a session "bench" begun on first use). Every
/// resolve after the first is answered from the host's scope cache; in a worker, each one
/// is a round trip to the host. The view shows how many resolves it made.
final class ResolveScreen: Screen {
    static let route = "resolve"
    static let actions: [ScreenAction] = ["screen", "session"]
    private let context: ScreenContext
    private var resolves = 0
    private var inSession = false

    init(context: ScreenContext) {
        self.context = context
    }

    var body: some View {
        Text("resolved \(resolves)")
    }

    func handle(action: String, payload: [UInt8]) throws {
        let count = Int(String(decoding: payload, as: UTF8.self)) ?? 1
        switch action {
        case "screen":
            for _ in 0..<count { _ = try context.resolve(ScreenResolved.self) }
        case "session":
            if !inSession {
                try context.beginSession("bench")
                inSession = true
            }
            for _ in 0..<count { _ = try context.resolve(SessionResolved.self) }
        default:
            throw BerthError(code: .notFound, message: "resolve has no action '\(action)' (screen, session)")
        }
        resolves += count
    }
}

/// One per open screen.
final class ScreenResolved {}

/// One per session.
final class SessionResolved {}
