public import BerthRuntime

/// Something a person can focus, press or click, named by identity, not by position: a
/// view by its structural identity path, an action or a route by its name. Focus kept as a
/// target survives re-renders and reloads, which keep identities.
public enum FocusTarget: Hashable, Sendable {
    /// An interactive view (Button, Toggle, Stepper, TextField) by its identity path.
    case view(String)
    /// An action the screen declares (sent when pressed).
    case action(String)
    /// A route to open, on the start screen.
    case route(Route)
    /// The header's back (or dismiss) affordance: clickable, never focused.
    case back
    /// One option of a picker (the picker's identity path, the option's index): clicking
    /// selects it; never focused (the picker is).
    case option(view: String, index: Int)

    /// Whether Tab stops on it.
    var isFocusable: Bool {
        switch self {
        case .view, .action, .route: true
        case .back, .option: false
        }
    }
}

/// A target placed on a frame: where a click lands on it.
public struct PlacedTarget: Equatable, Sendable {
    /// What was placed.
    public var target: FocusTarget
    /// The row it is on.
    public var row: Int
    /// Its first column.
    public var column: Int
    /// How many columns it takes.
    public var width: Int

    func contains(column: Int, row: Int) -> Bool {
        row == self.row && column >= self.column && column < self.column + width
    }
}
