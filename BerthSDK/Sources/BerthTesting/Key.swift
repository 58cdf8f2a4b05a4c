/// A key to press, by the name Docs/testing-plugins.md gives it. What each key does is the
/// terminal front end's (Docs/terminal-ui.md): Tab moves focus, Enter and Space press, `+`
/// and `-` step, Esc goes back.
public enum Key: Sendable, Hashable {
    case tab, shiftTab, enter, space, escape, backspace, delete
    case up, down, left, right, home, end, pageUp, pageDown
    /// One character as typed (`.character("+")` steps a stepper up).
    case character(Character)
    /// Ctrl with a lower-case letter (`.control("c")` quits the front end).
    case control(Character)
    /// F1…F12 (`.function(2)` shows the inspector).
    case function(Int)

    /// The name `berth test-host` reads.
    var wireName: String {
        switch self {
        case .tab: "tab"
        case .shiftTab: "shift-tab"
        case .enter: "enter"
        case .space: "space"
        case .escape: "escape"
        case .backspace: "backspace"
        case .delete: "delete"
        case .up: "up"
        case .down: "down"
        case .left: "left"
        case .right: "right"
        case .home: "home"
        case .end: "end"
        case .pageUp: "page-up"
        case .pageDown: "page-down"
        case .character(let character): String(character)
        case .control(let letter): "ctrl-\(letter)"
        case .function(let number): "f\(number)"
        }
    }
}

/// Where the plugin under test runs: the two modes a host offers (Docs/isolation.md).
/// Test both: `@Test(arguments: PluginIsolation.allCases)`.
public enum PluginIsolation: String, Sendable, CaseIterable, CustomStringConvertible {
    /// In the host's own process (dlopen, direct calls).
    case inProcess = "in-process"
    /// In a `berth-worker` process of its own, as a host runs a plugin by default.
    case worker = "process"

    public var description: String { self == .inProcess ? "in-process" : "worker" }
}
