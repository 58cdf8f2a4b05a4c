public import BerthRuntime
import Foundation
import Hummingbird
import HummingbirdWebSocket
import Logging
import NIOCore

/// Serves a host's screens to browsers: the page and its script over HTTP, the live state
/// over a WebSocket, on 127.0.0.1 only, each request checked by a `WebAccessPolicy`.
///
///     let frontEnd = WebFrontEnd(host: host)
///     try await frontEnd.run { url in print("open \(url)") }   // until the task is cancelled
@MainActor
public final class WebFrontEnd {
    /// How it serves.
    public struct Options: Sendable {
        /// The port on 127.0.0.1 (0: one the system picks).
        public var port = 0
        /// The token (nil: a random one per run).
        public var token: String?
        /// The defaults.
        public init() {}
    }

    private let session: WebSession
    /// Who may connect.
    public let policy: WebAccessPolicy
    private let options: Options

    /// A front end for `host`; `run` serves it.
    public init(host: BerthHost, options: Options = Options()) {
        session = WebSession(adapter: WebHostAdapter(host: host))
        policy = WebAccessPolicy(token: options.token)
        self.options = options
    }

    /// The content security policy of every response: this server's own script, style and
    /// socket, nothing inline, nothing from elsewhere.
    nonisolated static let contentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

    /// Serves until the calling task is cancelled; `ready` gets the URL to open (with its
    /// token) once the port is bound.
    public func run(ready: @escaping @Sendable (String) -> Void) async throws {
        await session.start()
        defer { session.stop() }
        let policy = self.policy
        let session = self.session
        let router = Router()
        router.add(middleware: AccessMiddleware(policy: policy))
        router.get("/") { _, _ in Self.response(Array(WebPage.html(token: policy.token).utf8), type: "text/html; charset=utf-8") }
        router.get("/page.js") { _, _ in Self.response(WebPage.script, type: "text/javascript; charset=utf-8") }
        router.get("/page.css") { _, _ in Self.response(WebPage.styles, type: "text/css; charset=utf-8") }
        var logger = Logger(label: "berth.web")
        // Hummingbird logs a cancelled child channel at shutdown as an error; a failure to
        // serve (the port taken) is thrown by `run` instead.
        logger.logLevel = .critical
        let app = Application(
            router: router,
            server: .http1WebSocketUpgrade { request, _, _ in
                // A refused upgrade falls through to the router, whose middleware answers 403.
                guard request.path?.split(separator: "?").first == "/ws",
                      policy.refusal(target: request.path ?? "", host: request.authority,
                                     origin: request.headerFields[.origin]) == nil
                else { return .dontUpgrade }
                return .upgrade([:]) { inbound, outbound, _ in
                    let (client, messages) = await session.connect()
                    try await withThrowingTaskGroup(of: Void.self) { group in
                        group.addTask {
                            for await message in messages { try await outbound.write(.text(message)) }
                        }
                        for try await message in inbound.messages(maxSize: 1 << 20) {
                            if case .text(let text) = message { await session.receive(text, from: client) }
                        }
                        group.cancelAll()
                    }
                    await session.disconnect(client)
                }
            },
            configuration: .init(address: .hostname("127.0.0.1", port: options.port), serverName: "berth"),
            onServerRunning: { channel in
                let port = channel.localAddress?.port ?? 0
                policy.port = port
                ready("http://127.0.0.1:\(port)/?token=\(policy.token)")
            },
            logger: logger
        )
        try await app.run()
    }

    nonisolated static func response(_ bytes: some Sequence<UInt8>, type: String) -> Response {
        Response(
            status: .ok,
            headers: [.contentType: type, .contentSecurityPolicy: contentSecurityPolicy, .cacheControl: "no-store"],
            body: .init(byteBuffer: ByteBuffer(bytes: bytes))
        )
    }
}

/// Refuses every request the policy refuses, with 403 and its one line.
struct AccessMiddleware<Context: RequestContext>: RouterMiddleware {
    let policy: WebAccessPolicy

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let target = request.uri.path + (request.uri.query.map { "?" + $0 } ?? "")
        if let refusal = policy.refusal(target: target, host: request.head.authority, origin: request.headers[.origin]) {
            return Response(status: .forbidden, headers: [.contentType: "text/plain; charset=utf-8", .contentSecurityPolicy: WebFrontEnd.contentSecurityPolicy],
                            body: .init(byteBuffer: ByteBuffer(string: refusal + "\n")))
        }
        return try await next(request, context)
    }
}
