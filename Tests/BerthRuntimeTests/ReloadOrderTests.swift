import Foundation
import Testing
@_spi(Engine) @testable import BerthRuntime
import BerthTestSupport

/// A reload takes its screens out as navigation removes screens (ScreenEventPlanner): every
/// `willDisappear`, then every `didDisappear`. Runs in both modes.
@Suite("Reload follows the documented event order") @MainActor
struct ReloadOrderTests {
    @Test("three screens on one stack and one presented: every will-event, then every did-event")
    func severalScreens() throws {
        let workspace = PluginWorkspace()
        workspace.stage("greeter.json")
        workspace.stage("inbox.json")
        let host = try workspace.makeHost()
        try host.load("com.example.inbox")
        let stack = [try host.push("inbox"), try host.push("inbox"), try host.push("inbox")]
        let modal = try host.present("compose")
        let ids = Set((stack + [modal]).map { HostEvent.Subject.screen($0.id) })
        let before = host.events.count
        try host.reload("com.example.inbox")
        let removal = host.events.dropFirst(before).filter { ids.contains($0.subject) && $0.message.contains("Disappear(isRemovedPermanently: true)") }
        #expect(removal.count == 8, "\(removal.map(\.description))")
        let firstDid = try #require(removal.firstIndex { $0.message.hasPrefix("didDisappear") })
        #expect(removal[..<firstDid].count == 4 && removal[..<firstDid].allSatisfy { $0.message.hasPrefix("willDisappear") },
                "\(removal.map { "\($0.subject) \($0.message)" })")
        #expect(Set(removal.map(\.subject)) == ids)
        #expect(host.visibleRouter === modal, "the presented screen is visible again after the reload")
    }
}
