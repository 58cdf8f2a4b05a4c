@_spi(Engine) import BerthCore
/// Computes the screen lifecycle events of one navigation transition from what the host
/// knows for certain: which screen was visible before, which is visible after, and which
/// screens the transition removes for good. Nothing is guessed from container state.
///
/// The order follows a navigation container's: `willDisappear` of what goes away (the
/// removed screens, deepest first, then a covered screen), `willAppear` of what comes
/// into view, then the matching `did` events in the same order.
///
/// - A removed screen is told `isRemovedPermanently = true` exactly once, even when it
///   was hidden (under a pushed screen or a modal) at the time: every screen of a
///   dismissed modal stack learns it is gone.
/// - `isPresentedInitially` is true on a screen's first appearance only.
enum ScreenEventPlanner {
    struct Planned<Screen: Hashable>: Equatable {
        let screen: Screen
        let event: ScreenLifecycleEvent
    }

    static func plan<Screen: Hashable>(
        visibleBefore: Screen?, visibleAfter: Screen?, removed: [Screen], hasAppeared: (Screen) -> Bool
    ) -> [Planned<Screen>] {
        var disappearing: [(Screen, Bool)] = removed.map { ($0, true) }
        if let before = visibleBefore, before != visibleAfter, !removed.contains(before) {
            disappearing.append((before, false))
        }
        var appearing: (Screen, Bool)?
        if let after = visibleAfter, after != visibleBefore {
            appearing = (after, !hasAppeared(after))
        }
        var events: [Planned<Screen>] = disappearing.map { Planned(screen: $0.0, event: .willDisappear(isRemovedPermanently: $0.1)) }
        if let (screen, initially) = appearing {
            events.append(Planned(screen: screen, event: .willAppear(isPresentedInitially: initially)))
        }
        events += disappearing.map { Planned(screen: $0.0, event: .didDisappear(isRemovedPermanently: $0.1)) }
        if let (screen, initially) = appearing {
            events.append(Planned(screen: screen, event: .didAppear(isPresentedInitially: initially)))
        }
        return events
    }
}
