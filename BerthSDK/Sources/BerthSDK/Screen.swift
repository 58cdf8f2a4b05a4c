/// A screen a plugin provides: one route, one instance per open screen.
///
/// The host creates a fresh instance each time the route opens and releases it when the
/// screen closes, so anything stored in the instance resets on reopen. Every method runs
/// on the host's main thread.
public protocol Screen: AnyObject {
    associatedtype Body: View = EmptyView

    /// The route name, as listed in the manifest's `routes`.
    static var route: String { get }

    /// The actions `handle(action:payload:)` accepts, as `berth pack` writes them into the
    /// manifest's `actions`. None by default, and then the host sends any name; once some
    /// are declared, the host refuses the others before they reach the screen. Leave out
    /// actions only the screen itself posts (an effect's result).
    static var actions: [ScreenAction] { get }

    /// What the screen shows, rebuilt on every render pass.
    @ViewBuilder var body: Body { get }

    /// Creates the instance. `context` is this screen's line to the host.
    init(context: ScreenContext) throws

    /// Runtime wiring starts (the screen is attached and visible to the host).
    func activate() throws
    /// Runtime wiring stops; the host has cancelled this screen's managed tasks.
    func deactivate()
    /// A screen lifecycle event.
    func onEvent(_ event: ScreenEvent)
    /// An action sent to the screen (`send NAME PAYLOAD` in the host, or a posted result).
    func handle(action: String, payload: [UInt8]) throws
    /// A delegate action from a child screen this screen observes
    /// (`ScreenContext.observeDelegate(of:)`).
    func delegate(from child: ScreenID, action: String, payload: [UInt8]) throws
    /// Instance state to carry into a fresh instance (`reload --keep-state`); empty by default.
    func saveState() throws -> [UInt8]
    /// What `saveState` wrote, handed to a fresh instance before it activates.
    func restoreState(_ bytes: [UInt8]) throws

    /// Renders `body` as the screen's root. The SDK implements it (inlinable, so each
    /// screen's render is specialized for its own views); screens do not.
    func _render(_ renderer: Renderer)
}

extension Screen {
    /// Renders `body` at `<ScreenType>/<BodyType>`. Called by the SDK, not by plugin code.
    @inlinable
    public func _render(_ renderer: Renderer) {
        renderer._screen(Self.self, body: Body.self) { identity in
            body._render(renderer, identity: identity)
        }
    }
}

extension Screen where Body == EmptyView {
    /// The default body for a screen that shows nothing.
    public var body: EmptyView { EmptyView() }
}

extension Screen {
    /// None by default: the host sends any action name.
    public static var actions: [ScreenAction] { [] }
    /// Does nothing by default.
    public func activate() throws {}
    /// Does nothing by default.
    public func deactivate() {}
    /// Ignores the event by default.
    public func onEvent(_ event: ScreenEvent) {}
    /// Throws `unsupported` by default: the screen handles no actions.
    public func handle(action: String, payload: [UInt8]) throws {
        throw BerthError(code: .unsupported, message: "\(Self.route) has no action '\(action)'")
    }
    /// Ignores delegate actions by default.
    public func delegate(from child: ScreenID, action: String, payload: [UInt8]) throws {}
    /// Returns no bytes by default: a reloaded screen starts fresh.
    public func saveState() throws -> [UInt8] { [] }
    /// Does nothing by default.
    public func restoreState(_ bytes: [UInt8]) throws {}
}

/// Screen lifecycle events, computed by the host from the transition it performs.
public enum ScreenEvent: Sendable, Equatable {
    case didLoad
    case willAppear(isPresentedInitially: Bool)
    case didAppear(isPresentedInitially: Bool)
    case willDisappear(isRemovedPermanently: Bool)
    case didDisappear(isRemovedPermanently: Bool)
}

/// An error crossing the plugin boundary: the host shows `message`.
public struct BerthError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What kind of failure this is, as the ABI's status code.
    public enum Code: Int32, Sendable {
        case invalidArgument = 1, notFound, unsupported, state, failed, cancelled, decode
        /// The host refused a call the plugin's manifest has no capability for; the message
        /// names the capability to state in `Plugin(capabilities:)` (or a C plugin's manifest).
        case denied
    }

    /// The kind of failure.
    public var code: Code
    /// The text the host shows.
    public var message: String

    /// An error of kind `code` with the text the host shows.
    public init(code: Code, message: String) {
        self.code = code
        self.message = message
    }

    /// The message.
    public var description: String { message }
}
