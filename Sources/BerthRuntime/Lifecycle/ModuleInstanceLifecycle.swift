@_spi(Engine) import BerthCore
/// Where an open screen's module instance is in its life.
public enum ScreenState: String, Sendable {
    /// Made by the plugin's `create`; activated (running its tasks, taking actions); deactivated
    /// (before detaching: its tasks cancelled, actions refused); destroyed.
    case created, active, inactive, released
    /// Only in a snapshot (`ScreenSnapshot.state`), while `BerthHost.open` runs the screen's
    /// `activate` and first render on its plugin's lane (its instance is created, then
    /// active, meanwhile): attached under its opener, not yet pushed or presented, so not
    /// visible and in no `visibleScreens`.
    case opening
}

/// The life of one module instance (an open screen):
/// `created → active ⇄ inactive → released`.
///
/// Activation and deactivation are idempotent: a repeated event returns `.none` and the
/// plugin is not called again. Release is legal only when not active (the close sequence
/// always deactivates first) and happens once.
struct ModuleInstanceLifecycle: Sendable {
    /// What the caller must do for an event.
    enum Action: Equatable {
        /// Nothing: the instance is already in the requested state.
        case none
        /// Call the plugin's `activate`.
        case callActivate
        /// Cancel and await managed tasks, then call the plugin's `deactivate`.
        case callDeactivate
        /// Call the plugin's `destroy`.
        case callDestroy
    }

    private enum State: Equatable {
        case created
        case active
        case inactive
        case released
    }

    private var state: State = .created
    private let subject: LifecycleError.Subject

    init(subject: LifecycleError.Subject) {
        self.subject = subject
    }

    /// The state, as the host shows it.
    var current: ScreenState {
        switch state {
        case .created: .created
        case .active: .active
        case .inactive: .inactive
        case .released: .released
        }
    }

    var isActive: Bool { state == .active }
    var isReleased: Bool { state == .released }

    mutating func activate() throws(LifecycleError) -> Action {
        switch state {
        case .created, .inactive:
            state = .active
            return .callActivate
        case .active:
            return .none
        case .released:
            throw LifecycleError(subject: subject, state: current, event: .activate)
        }
    }

    /// Activation failed in the plugin: the instance is back to inactive, and the plugin's
    /// `deactivate` still runs, so whatever `activate` started before failing is cleaned up
    /// (ComposableRIBs' interactors forward deactivate the same way).
    mutating func activationFailed() -> Action {
        switch state {
        case .active:
            state = .inactive
            return .callDeactivate
        case .created, .inactive, .released: preconditionFailure("activationFailed without activate")
        }
    }

    mutating func deactivate() -> Action {
        switch state {
        case .active:
            state = .inactive
            return .callDeactivate
        case .created, .inactive, .released:
            return .none
        }
    }

    mutating func release() throws(LifecycleError) -> Action {
        switch state {
        case .created, .inactive:
            state = .released
            return .callDestroy
        case .released:
            return .none
        case .active:
            throw LifecycleError(subject: subject, state: current, event: .release)
        }
    }
}
