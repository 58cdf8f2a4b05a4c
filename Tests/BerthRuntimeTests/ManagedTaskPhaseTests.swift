import Testing
@_spi(Engine) @testable import BerthRuntime

@Suite("A managed task's phase: cancelled once, returned once, released once")
struct ManagedTaskPhaseTests {
    @Test("the first cancel tells the plugin, later ones do not; a cancelled body returns cancelled")
    func cancelOnce() {
        var phase = ManagedTaskPhase()
        #expect(!phase.isCancelled && !phase.hasReturned)
        #expect(phase.cancel() == .tellPlugin)
        #expect(phase.cancel() == .none)
        #expect(phase.isCancelled && !phase.hasReturned)
        phase.bodyReturned()
        #expect(phase.isCancelled && phase.hasReturned)
        #expect(phase.cancel() == .none)
    }

    @Test("a body that returned by itself is not cancelled until cancel is called (then once)")
    func returnedThenCancelled() {
        var phase = ManagedTaskPhase()
        phase.bodyReturned()
        #expect(phase.hasReturned && !phase.isCancelled)
        #expect(phase.cancel() == .tellPlugin)
        #expect(phase.isCancelled)
        #expect(phase.cancel() == .none)
    }

    @Test("release is called once, whether or not the body ran")
    func releaseOnce() {
        var ran = ManagedTaskPhase()
        ran.bodyReturned()
        #expect(ran.release() == .callRelease)
        #expect(ran.release() == .none)
        var refused = ManagedTaskPhase()
        #expect(refused.release() == .callRelease)
        #expect(refused.release() == .none)
        #expect(!refused.hasReturned)
    }
}
