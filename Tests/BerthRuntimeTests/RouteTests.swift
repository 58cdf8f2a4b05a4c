@_spi(Engine) import BerthRuntime
import BerthTestSupport
import CBerth
import Foundation
import Testing

/// `Route`: plugin id and route name as fields, parsed from text at the edges (the CLI, a
/// restart plan, a plugin's `navigate`) with a one-line error that names the text.
@MainActor
@Suite("Routes")
struct RouteTests {
    let workspace = PluginWorkspace()

    @Test("PLUGIN.ID/ROUTE and a bare ROUTE parse into their fields, and description gives the text back")
    func parsesBothForms() throws {
        let full = try Route(parsing: "com.example.counter/counter")
        #expect(full.pluginID == "com.example.counter" && full.name == "counter")
        #expect(full.description == "com.example.counter/counter")
        let bare = try Route(parsing: "user-detail")
        #expect(bare.pluginID == nil && bare.name == "user-detail")
        #expect(bare.description == "user-detail")
        #expect(Route(plugin: "com.example.counter", name: "counter") == full)
        let literal: Route = "com.example.counter/counter"
        #expect(literal == full)
    }

    @Test("malformed text fails with one line that names the text and what is wrong", arguments: [
        ("", "route '' is empty (write PLUGIN.ID/ROUTE or ROUTE)"),
        ("a/b/c", "route 'a/b/c' has more than one '/' (write PLUGIN.ID/ROUTE or ROUTE)"),
        ("/counter", "route '/counter' has no plugin id before '/' ('' is not lower-case dot-separated labels, e.g. com.example.counter)"),
        ("Counter/x", "route 'Counter/x' has no plugin id before '/' ('Counter' is not lower-case dot-separated labels, e.g. com.example.counter)"),
        ("com.example.counter/", "route 'com.example.counter/' has no route name ('' is not a letter followed by letters, digits, '-', '_' or '.')"),
        ("open counter", "route 'open counter' has no route name ('open counter' is not a letter followed by letters, digits, '-', '_' or '.')"),
    ])
    func malformed(text: String, message: String) {
        #expect { try Route(parsing: text) } throws: { error in
            guard let error = error as? Route.SyntaxError else { return false }
            return error.text == text && error.message == message && !error.message.contains("\n")
        }
    }

    @Test("a route encodes as its text, and decoding malformed text fails naming it")
    func codable() throws {
        let replay = BerthHost.RouteReplay(route: "com.example.counter/counter", presented: true)
        let data = try JSONEncoder().encode(replay)
        #expect(String(decoding: data, as: UTF8.self).contains(#""route":"com.example.counter\/counter""#))
        #expect(try JSONDecoder().decode(BerthHost.RouteReplay.self, from: data) == replay)
        let bad = Data(#"{"route":"a/b/c","presented":false}"#.utf8)
        #expect { try JSONDecoder().decode(BerthHost.RouteReplay.self, from: bad) } throws: { error in
            "\(error)".contains("route 'a/b/c' has more than one '/'")
        }
    }

    @Test("a plugin's navigate with a malformed route is refused as an invalid argument naming the route")
    func pluginNavigatesToMalformedRoute() throws {
        workspace.stageProbe()
        let host = try BerthHost(configuration: .init(pluginFolders: [workspace.plugins], runtimeBase: workspace.runtimeBase,
                                                     isolation: TestIsolation.settings))
        defer { host.shutdown() }
        host.discover()
        #expect(host.loadAll().isEmpty)
        let screen = try host.push("probe")
        #expect { try host.sendBlocking(screen: screen.id, action: "push", payload: Array("org.berth.probe//other".utf8)) } throws: { error in
            guard let error = error as? ScreenError else { return false }
            return error.pluginStatus == .invalidArgument
                && error.message.contains("navigate: route 'org.berth.probe//other' has more than one '/'")
        }
        #expect(host.openRouters.count == 1)
        // The control: the same call with a well-formed route opens the screen.
        try host.sendBlocking(screen: screen.id, action: "push", payload: Array("org.berth.probe/other".utf8))
        #expect(host.openRouters.map(\.qualifiedRoute) == ["org.berth.probe/probe", "org.berth.probe/other"])
    }
}
