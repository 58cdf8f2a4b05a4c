import Foundation
import Synchronization

/// Who may use the web front end: a request must carry the host's token in its URL (any
/// local process could otherwise drive the host, as Jupyter's token guards a notebook), name
/// this server in `Host` (a DNS-rebound name is refused), and, when a browser sends an
/// `Origin`, come from this server's own page (a cross-site WebSocket is refused).
public final class WebAccessPolicy: Sendable {
    /// The token every request carries as `?token=…`.
    public let token: String
    private let boundPort = Atomic<Int>(0)

    /// A policy for `token` (nil: 32 random bytes, as hex).
    public init(token: String? = nil) {
        self.token = token ?? Self.randomToken()
    }

    /// The port the server listens on, once bound; `Host` and `Origin` must name it.
    public var port: Int {
        get { boundPort.load(ordering: .acquiring) }
        set { boundPort.store(newValue, ordering: .releasing) }
    }

    /// The names a browser on this machine uses for the server.
    static let loopbackNames: Set<String> = ["127.0.0.1", "localhost"]

    /// Why a request for `target` (path and query) with these headers is refused; nil
    /// when it may go on.
    public func refusal(target: String, host: String?, origin: String?) -> String? {
        guard let host, let authority = Self.authority(host), Self.loopbackNames.contains(authority.name), authority.port == port else {
            return "refused: Host '\(host ?? "")' is not this server (127.0.0.1:\(port) or localhost:\(port))"
        }
        if let origin {
            guard let url = URLComponents(string: origin), url.scheme == "http", let name = url.host,
                  Self.loopbackNames.contains(name), url.port == port
            else {
                return "refused: Origin '\(origin)' is not this server's page (http://127.0.0.1:\(port))"
            }
        }
        let given = URLComponents(string: target)?.queryItems?.first { $0.name == "token" }?.value
        guard let given, Self.constantTimeEqual(Array(given.utf8), Array(token.utf8)) else {
            return "refused: the URL's token is \(given == nil ? "missing" : "wrong"): open the URL the host printed"
        }
        return nil
    }

    /// `name:port` split; nil when it is not that.
    private static func authority(_ text: String) -> (name: String, port: Int)? {
        guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]) else { return nil }
        return (String(text[..<colon]), port)
    }

    private static func constantTimeEqual(_ lhs: [UInt8], _ rhs: [UInt8]) -> Bool {
        guard lhs.count == rhs.count else { return false }
        return zip(lhs, rhs).reduce(UInt8(0)) { $0 | ($1.0 ^ $1.1) } == 0
    }

    private static func randomToken() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<32).map { _ in String(format: "%02x", UInt8.random(in: 0...255, using: &generator)) }.joined()
    }
}
