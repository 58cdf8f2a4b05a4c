@_spi(Engine) import BerthCore
internal import CBerth

/// Input a person gives one interactive view of a screen's last render
/// (`BerthHost.input(_:view:screen:)`).
public enum ViewInput: Sendable, Hashable, CustomStringConvertible {
    /// Press a button.
    case tap
    /// Flip a toggle.
    case toggle
    /// Replace a text field's text.
    case type(String)
    /// Move a stepper by its step, or a picker to its next or previous option (clamped).
    case step(StepDirection)
    /// Choose a picker's option, by its index from 0.
    case select(Int)

    /// Which way a `step` goes.
    public enum StepDirection: Sendable, Hashable, CaseIterable {
        /// Up: add the stepper's step; the picker's next option.
        case up
        /// Down: subtract the step; the picker's previous option.
        case down
    }

    /// The input as the CLI's commands spell it: `tap`, `type TEXT`, `step +`, `select 2`.
    public var description: String {
        switch self {
        case .tap: "tap"
        case .toggle: "toggle"
        case .type(let text): "type \(text)"
        case .step(.up): "step +"
        case .step(.down): "step -"
        case .select(let index): "select \(index)"
        }
    }
}

/// The input in a person's words, for messages: a view input's action name (`berth.tap`) is
/// berth.h's, and means nothing to whoever tapped.
extension ViewInput {
    /// What was done to `node`, as the shell's command and the view: "tap on the Button
    /// 'Wave'", "type into the TextField 'Name'", "step + on the Stepper 'Count'"; the view's
    /// identity when it has no label.
    func described(on node: ViewNode) -> String {
        let verb = switch self {
        case .type: "type into"
        case .tap, .toggle, .step, .select: "\(self) on"
        }
        let label = node.fields["label"].flatMap { $0.isEmpty ? nil : "'\($0)'" } ?? node.id
        return "\(verb) the \(node.type) \(label)"
    }
}

/// The input as berth.h defines it on the plugin's `action` entry point (one encoding for
/// plugins in process and in workers alike: both get it through `ModuleInstance.handle`).
extension ViewInput {
    /// The action's name: `BERTH_INPUT_TAP` … `BERTH_INPUT_SELECT`.
    var actionName: String {
        switch self {
        case .tap: BERTH_INPUT_TAP
        case .toggle: BERTH_INPUT_TOGGLE
        case .type: BERTH_INPUT_TYPE
        case .step: BERTH_INPUT_STEP
        case .select: BERTH_INPUT_SELECT
        }
    }

    /// The action's payload for the view `identity`: the identity path, the
    /// `BERTH_INPUT_SEPARATOR` byte, then the value (nothing for tap and toggle, the text,
    /// `BERTH_INPUT_STEP_UP` or `BERTH_INPUT_STEP_DOWN`, the index in decimal digits).
    func payload(view identity: String) -> [UInt8] {
        let value: String = switch self {
        case .tap, .toggle: ""
        case .type(let text): text
        case .step(.up): BERTH_INPUT_STEP_UP
        case .step(.down): BERTH_INPUT_STEP_DOWN
        case .select(let index): String(index)
        }
        return Array(identity.utf8) + [UInt8(BERTH_INPUT_SEPARATOR)] + Array(value.utf8)
    }
}
