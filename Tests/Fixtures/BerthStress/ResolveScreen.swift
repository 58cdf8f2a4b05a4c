import BerthSDK

/// Resolves a cached service many times in one action, for the scoped-resolve benchmarks:
/// "screen N" resolves the screen-scoped `ScreenResolved` N times, "session N" the
/// session-scoped `SessionResolved` N times (a session "bench" begun on first use),
/// "request N" the request-scoped `RequestResolved` N times in the action's request. Every
/// resolve after the first finds the instance already made: in process in the host's
/// scope; in a worker, a screen or session key is answered by the worker itself, a
/// request-scoped one by a round trip to the host. The view shows how many resolves it made.
final class ResolveScreen: Screen {
    static let route = "resolve"
    static let actions: [ScreenAction] = ["screen", "session", "request"]
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
        case "request":
            for _ in 0..<count { _ = try context.resolve(RequestResolved.self) }
        default:
            throw BerthError(code: .notFound, message: "resolve has no action '\(action)' (screen, session, request)")
        }
        resolves += count
    }
}

/// One per open screen.
final class ScreenResolved {}

/// One per session.
final class SessionResolved {}

/// One per request (action).
final class RequestResolved {}
