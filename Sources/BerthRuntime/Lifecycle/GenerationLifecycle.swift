/// The life of one loaded generation of a plugin: `loaded → retired` (Swift images, which
/// stay mapped) or `loaded → unloaded` (C images, closed and proven gone).
struct GenerationLifecycle: Sendable {
    /// What the caller must do after `end()`.
    enum EndAction: Equatable {
        /// Keep the image mapped and count it as retired.
        case retireImage
        /// `dlclose` the image and verify it is gone.
        case closeImage
    }

    private enum State: Equatable {
        case loaded
        case retired
        case unloaded
    }

    private var state: State = .loaded
    private let runtime: PluginRuntimeKind
    private let subject: String

    init(runtime: PluginRuntimeKind, subject: String) {
        self.runtime = runtime
        self.subject = subject
    }

    var name: String {
        switch state {
        case .loaded: "loaded"
        case .retired: "retired"
        case .unloaded: "unloaded"
        }
    }

    var isLoaded: Bool { state == .loaded }

    /// The generation is being unloaded or replaced.
    mutating func end() throws(LifecycleError) -> EndAction {
        switch state {
        case .loaded:
            switch runtime {
            case .swift:
                state = .retired
                return .retireImage
            case .c:
                state = .unloaded
                return .closeImage
            }
        case .retired, .unloaded:
            throw LifecycleError(subject: subject, state: name, event: "unload")
        }
    }
}
