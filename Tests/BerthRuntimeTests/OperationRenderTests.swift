import Testing
@_spi(Engine) @testable import BerthRuntime
import BerthTestSupport

/// The render at the end of a host operation, through the Stress plugin's `appear` screen,
/// which counts its render passes (Tests/Fixtures/BerthStress/AppearScreen.swift).
@Suite("Render at the end of an operation") @MainActor
struct OperationRenderTests {
    private func text(_ router: Router) -> String? {
        router.module?.lastTree?.allNodes.first { $0.type == "Text" }?.fields["text"]
    }

    private func appeared(_ router: Router) -> Bool {
        router.module?.deliveredEvents.contains { if case .didAppear = $0 { true } else { false } } ?? false
    }

    @Test("opening a screen whose appear events call nothing back renders it once, and the next operation renders it again")
    func quietEventsKeepTheOpeningRender() async throws {
        let plugins = try await ExamplePlugins(adding: ["stress.json"])
        let host = plugins.host
        let first = try host.push("org.berth.stress/appear")
        #expect(appeared(first))
        #expect(text(first) == "renders 1, appeared false")
        let second = try host.push("org.berth.stress/appear")
        #expect(appeared(second))
        #expect(text(second) == "renders 1, appeared false")
        #expect(text(first) == "renders 1, appeared false", "a covered screen is not rendered again")
        host.close(second)
        #expect(text(first) == "renders 2, appeared false", "closing the top renders the screen it uncovers")
    }

    @Test("an appear event that calls the host makes the operation end with a fresh render")
    func eventThatCallsBackRendersAgain() async throws {
        let plugins = try await ExamplePlugins(adding: ["stress.json"])
        let host = plugins.host
        let screen = try host.push("org.berth.stress/appear", argument: Array("call-back".utf8))
        #expect(appeared(screen))
        #expect(text(screen) == "renders 2, appeared true")
        let quiet = try host.push("org.berth.stress/appear")
        #expect(text(quiet) == "renders 1, appeared false")
        let calling = try host.push("org.berth.stress/appear", argument: Array("call-back".utf8))
        #expect(text(calling) == "renders 2, appeared true")
    }
}
