import Foundation
import Testing
@_spi(Engine) @testable import BerthRuntime
import BerthTestSupport

/// The two route-context mistakes a new author makes, answered in the event log: a type
/// misspelled against an observed one, and a picker that sends with `context` and stays open.
@Suite("Route context: hints for common mistakes") @MainActor
struct RouteContextHintTests {
    private let selection = "com.example.users.UserSelection"

    @Test("a context type nobody observes names the observed type it resembles")
    func didYouMean() async throws {
        let plugins = try await ExamplePlugins.withRouteContext()
        let host = plugins.host
        let profile = try host.push("profile")
        try host.sendBlocking(screen: profile.id, action: "pick-inline", payload: [])
        let users = try #require(host.visibleRouter)
        #expect(host.contextObservations.contains { $0.type == selection && $0.screen == profile.id })
        host.sendContext("com.example.user.UserSelection", payload: [], from: users)
        #expect(host.events.last?.message ==
            "context com.example.user.UserSelection has no observer; did you mean '\(selection)' (observed by screen \(profile.id))?")
        host.sendContext("com.example.nobody.Cares", payload: [], from: users)
        #expect(host.events.last?.message == "context com.example.nobody.Cares has no observer", "nothing alike: no guess")
    }

    @Test("a screen that sends context and stays open gets one note naming terminate; terminate gets none")
    func staysOpenNote() async throws {
        let plugins = try await ExamplePlugins.withRouteContext()
        let host = plugins.host
        let profile = try host.push("profile")
        try host.sendBlocking(screen: profile.id, action: "pick-inline", payload: [])
        let users = try #require(host.visibleRouter)
        let choice = Array(#"{"id":"grace","name":"Grace Hopper"}"#.utf8)
        let note = "note: context \(selection) was sent and screen \(users.id) stays open; terminate(\(selection)) sends it and closes the screen"
        #expect(!host.sendContext(selection, payload: choice, from: users).receivers.isEmpty)
        #expect(host.events.filter { $0.message == note }.count == 1)
        #expect(host.events.last?.subject == .screen(users.id))
        host.sendContext(selection, payload: choice, from: users)
        #expect(host.events.filter { $0.message.hasPrefix("note: ") }.count == 1, "once per screen")

        let again = try host.push("profile")
        try host.sendBlocking(screen: again.id, action: "pick-inline", payload: [])
        let picker = try #require(host.visibleRouter)
        host.terminate(selection, payload: choice, from: picker)
        #expect(host.events.filter { $0.message.hasPrefix("note: ") }.count == 1, "terminate closes: no note")
    }
}
