/// Where the person is on each screen (by router id; 0 is the start screen): focus kept by
/// identity and its place in the focus order, the scroll, and the text fields' carets.
/// Coming back to a screen finds them as they were left.
struct ScreenPlaces {
    /// The focused target per screen.
    private(set) var focus: [Int: FocusTarget] = [:]
    /// Where focus was in the order, to land near it when its target goes away.
    private var focusIndex: [Int: Int] = [:]
    /// The first content row shown, per screen.
    private(set) var scroll: [Int: Int] = [:]
    /// Caret offsets of text fields, by screen and identity (none kept: at the end).
    private(set) var carets: [Int: [String: Int]] = [:]
    /// Whether the scroll follows focus (until the person scrolls by hand).
    private(set) var followFocus = true

    /// Focuses `target` on `screen`, whose focus order is `order`, and scrolls to it again.
    mutating func setFocus(_ target: FocusTarget, on screen: Int, order: [FocusTarget]?) {
        focus[screen] = target
        if let index = order?.firstIndex(of: target) { focusIndex[screen] = index }
        followFocus = true
    }

    /// Moves focus `step` places along `order`, round at either end; from nothing, to the
    /// first (forward) or the last (back).
    mutating func moveFocus(by step: Int, on screen: Int, order: [FocusTarget]?) {
        guard let order, !order.isEmpty else { return }
        let current = focus[screen].flatMap { order.firstIndex(of: $0) } ?? (step > 0 ? -1 : 0)
        let next = ((current + step) % order.count + order.count) % order.count
        setFocus(order[next], on: screen, order: order)
    }

    /// Scrolls by hand (never above the top); the scroll stops following focus.
    mutating func scroll(by rows: Int, on screen: Int) {
        scroll[screen] = max((scroll[screen] ?? 0) + rows, 0)
        followFocus = false
    }

    /// When nothing on `screen` is focused, or its target is no longer in `order`, focuses
    /// the target nearest to where focus was and returns it; nil when focus stays.
    mutating func refocus(on screen: Int, order: [FocusTarget]) -> FocusTarget? {
        guard focus[screen].map({ !order.contains($0) }) ?? true, !order.isEmpty else { return nil }
        let target = order[min(focusIndex[screen] ?? 0, order.count - 1)]
        focus[screen] = target
        return target
    }

    /// Notes a frame drawn for `screen`: its scroll, and where focus sits in its order.
    mutating func noteDrawn(on screen: Int, order: [FocusTarget], scroll rows: Int) {
        scroll[screen] = rows
        if let focused = focus[screen], let index = order.firstIndex(of: focused) { focusIndex[screen] = index }
    }

    /// The caret kept for `view` on `screen` (nil: at the end of its text).
    func caret(of view: String, on screen: Int) -> Int? {
        carets[screen]?[view]
    }

    /// The caret to draw when `target` is a text field with a kept caret.
    func caret(for target: FocusTarget?, on screen: Int) -> (view: String, offset: Int)? {
        guard case .view(let id)? = target, let offset = caret(of: id, on: screen) else { return nil }
        return (id, offset)
    }

    /// Keeps `offset` as the caret of `view` on `screen` (nil: back to the end of its text).
    mutating func setCaret(_ offset: Int?, of view: String, on screen: Int) {
        carets[screen, default: [:]][view] = offset
    }
}
