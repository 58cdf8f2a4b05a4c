/// An event that is illegal in the current lifecycle state (API misuse, never a crash).
public struct LifecycleError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What the state machine belongs to (`generation com.example.counter#2`, `screen 7`).
    public var subject: String
    /// The state it was in.
    public var state: ScreenState
    /// The event that was refused.
    public var event: String

    /// The refusal of `event` by `subject` while in `state`.
    public init(subject: String, state: ScreenState, event: String) {
        self.subject = subject
        self.state = state
        self.event = event
    }

    /// `subject: cannot event while state`.
    public var description: String { "\(subject): cannot \(event) while \(state.rawValue)" }
}
