@_spi(Engine) import BerthCore
/// Where one reload's time went, phase by phase: what the `reloaded` event carries and
/// `reload --json` prints. Phases that did not run (no screens open, no state kept) are zero.
public struct ReloadTimings: Sendable, Equatable {
    /// Reading and checking the plugin folder again (manifest, library digest, ELF).
    public var validate: Duration = .zero
    /// The trial load of an in-process plugin in a throwaway worker first (zero when the
    /// canary is off or the plugin is isolated).
    public var canary: Duration = .zero
    /// The shadow copy, hashed as it is written.
    public var copyAndHash: Duration = .zero
    /// `dlopen` of the copy and `dlsym` of the entry (isolated: starting the worker process).
    public var dlopen: Duration = .zero
    /// The entry call, the table checks and one libffi interface per export (isolated: the
    /// `hello` round trip, in which the worker does its dlopen, entry call and handshake).
    public var handshake: Duration = .zero
    /// Taking the old generation's screens out (save_state, deactivate, events, destroy).
    public var closeOldScreens: Duration = .zero
    /// Creating, activating and showing the fresh instances.
    public var reopen: Duration = .zero
    /// Handing kept `@State` slots and `save_state` bytes to the fresh instances.
    public var restore: Duration = .zero
    /// The whole reload, from validation to the old generation's end.
    public var total: Duration = .zero

    /// Every phase at zero.
    public init() {}

    /// Every phase with its name as `--json` and the event line print it, in order.
    public var phases: [(name: String, duration: Duration)] {
        [("validate", validate), ("canary", canary), ("copy+hash", copyAndHash), ("dlopen", dlopen), ("handshake", handshake),
         ("close old screens", closeOldScreens), ("reopen", reopen), ("restore", restore)]
    }
}

/// What loading one generation cost, by phase (a connection measures its own load; an
/// inspector reads it from `PluginGeneration.loadTimings`).
public struct LoadTimings: Sendable, Equatable {
    /// The shadow copy, hashed as it is written.
    public internal(set) var copyAndHash: Duration = .zero
    /// `dlopen` of the copy and `dlsym` of the entry (isolated: starting the worker process).
    public internal(set) var dlopen: Duration = .zero
    /// The entry call and the table checks (isolated: the `hello` round trip).
    public internal(set) var handshake: Duration = .zero
    package init() {}

    /// The three phases together.
    public var total: Duration { copyAndHash + dlopen + handshake }
}
