import Foundation
import Testing

/// The token, `Host` and `Origin` checks, against the real server with hand-written
/// requests; each refusal test also shows the same request with the check passing is
/// served, so removing a check fails it.
@Suite("the web server refuses what is not its own page", .serialized)
struct WebSecurityTests {
    static let upgradeHeaders = "Connection: Upgrade\nUpgrade: websocket\nSec-WebSocket-Version: 13\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ=="

    /// A refused WebSocket upgrade: hummingbird-websocket answers a refused upgrade with an
    /// empty 400 (never 101: no socket opens).
    private func isRefusedUpgrade(_ reply: String) -> Bool {
        reply.hasPrefix("HTTP/1.1 400") && !reply.contains("101")
    }

    private func withHost(_ body: (WebHost) throws -> Void) throws {
        let workspace = try Workspace()
        try workspace.stageExamples()
        let host = try WebHost(workspace: workspace, isolation: "process")
        defer { host.stop() }
        try body(host)
    }

    private func get(_ host: WebHost, target: String, hostHeader: String? = nil, origin: String? = nil, upgrade: Bool = false) throws -> String {
        var lines = ["GET \(target) HTTP/1.1", "Host: \(hostHeader ?? "127.0.0.1:\(host.port)")"]
        if let origin { lines.append("Origin: \(origin)") }
        if upgrade { lines.append(Self.upgradeHeaders) }
        lines.append("Connection: close")
        return try RawHTTP.request(port: host.port, lines.joined(separator: "\n") + "\n\n")
    }

    @Test("it listens on 127.0.0.1 only")
    func loopbackOnly() throws {
        try withHost { host in
            #expect(host.url.hasPrefix("http://127.0.0.1:"))
            let listening = try String(contentsOfFile: "/proc/net/tcp", encoding: .utf8)
            let port = String(format: "%04X", host.port)
            let lines = listening.split(separator: "\n").filter { $0.contains(":\(port) ") && $0.contains(" 0A ") }
            #expect(!lines.isEmpty && lines.allSatisfy { $0.contains("0100007F:\(port)") }, "\(lines)")
        }
    }

    @Test("the page needs the token: none or a wrong one is 403; the right one serves the page under a strict CSP")
    func token() throws {
        try withHost { host in
            let served = try get(host, target: "/?token=\(host.token)")
            #expect(served.hasPrefix("HTTP/1.1 200"), "\(served)")
            #expect(served.lowercased().contains("content-security-policy: default-src 'none'; script-src 'self'"))
            // One character changed (the first, to another hex digit).
            let wrong = (host.token.hasPrefix("0") ? "1" : "0") + host.token.dropFirst()
            for target in ["/", "/?token=", "/?token=\(wrong)", "/?token=\(host.token.dropLast())", "/page.js", "/page.js?token=nope"] {
                let refused = try get(host, target: target)
                #expect(refused.hasPrefix("HTTP/1.1 403"), "\(target): \(refused)")
            }
            #expect(try get(host, target: "/page.js?token=\(host.token)").hasPrefix("HTTP/1.1 200"))
        }
    }

    @Test("the WebSocket needs the token")
    func socketToken() throws {
        try withHost { host in
            #expect(try get(host, target: "/ws?token=\(host.token)", upgrade: true).hasPrefix("HTTP/1.1 101"))
            let refused = try get(host, target: "/ws?token=wrong", upgrade: true)
            #expect(isRefusedUpgrade(refused), "\(refused)")
            #expect(isRefusedUpgrade(try get(host, target: "/ws", upgrade: true)))
        }
    }

    @Test("a Host that is not this server (DNS rebinding) is refused, for the page and the WebSocket")
    func hostHeader() throws {
        try withHost { host in
            #expect(try get(host, target: "/?token=\(host.token)", hostHeader: "localhost:\(host.port)").hasPrefix("HTTP/1.1 200"))
            for name in ["attacker.example:\(host.port)", "127.0.0.1.attacker.example:\(host.port)", "127.0.0.1:1"] {
                let page = try get(host, target: "/?token=\(host.token)", hostHeader: name)
                #expect(page.hasPrefix("HTTP/1.1 403"), "\(name): \(page)")
                let socket = try get(host, target: "/ws?token=\(host.token)", hostHeader: name, upgrade: true)
                #expect(isRefusedUpgrade(socket), "\(name): \(socket)")
            }
        }
    }

    @Test("a WebSocket or a request from another site's page (its Origin) is refused; this page's Origin is upgraded")
    func origin() throws {
        try withHost { host in
            let own = try get(host, target: "/ws?token=\(host.token)", origin: "http://127.0.0.1:\(host.port)", upgrade: true)
            #expect(own.hasPrefix("HTTP/1.1 101"), "\(own)")
            for origin in ["http://attacker.example", "null", "http://127.0.0.1:1", "https://127.0.0.1:\(host.port)"] {
                let refused = try get(host, target: "/ws?token=\(host.token)", origin: origin, upgrade: true)
                #expect(isRefusedUpgrade(refused), "\(origin): \(refused)")
                // The page itself, fetched from another site, is refused too.
                let page = try get(host, target: "/?token=\(host.token)", origin: origin)
                #expect(page.hasPrefix("HTTP/1.1 403"), "\(origin): \(page)")
            }
        }
    }
}
