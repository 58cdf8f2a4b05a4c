package import CBerth

/// Why a screen could not be opened, driven or closed.
public struct ScreenError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What went wrong.
    public enum Code: Sendable, Equatable {
        /// No loaded plugin provides the route (or two do and the route names neither).
        case unknownRoute
        /// The route's plugin is not loaded, is invalid, or is past its crash budget.
        case pluginNotLoaded
        /// The plugin's call failed (its status is `pluginStatus`), or what it returned is not valid.
        case pluginFailed
        /// The screen's state does not allow the step (an action to an inactive screen…).
        case lifecycle
        /// No open screen has the id.
        case noSuchScreen
        /// The router tree refuses the navigation: nothing to present from, a presenter that is
        /// not the top of its stack or is covered by a modal, no screen above the root, no modal.
        case navigation
        /// Opening the screen would pass `Configuration.ScreenLimits` (open screens or stack depth).
        case screenLimit
        /// The screen, or the view, takes no input of this kind (no `action` function, a view
        /// that is not a control).
        case takesNoInput
        /// The screen's plugin is in another call on its lane: input waits until it returns.
        case busy
    }

    /// What went wrong.
    public var code: Code
    /// The screen involved; nil when none is (a screen that could not be opened).
    public var screen: Int?
    /// The status the plugin's call returned, when the plugin's call failed.
    public var pluginStatus: PluginStatus?
    /// The explanation a user reads.
    public var message: String

    /// An error of `code` about `screen`, explained by `message`; `pluginStatus` when the plugin's call failed.
    public init(_ code: Code, screen: Int?, _ message: String, pluginStatus: PluginStatus? = nil) {
        self.code = code
        self.screen = screen
        self.message = message
        self.pluginStatus = pluginStatus
    }

    /// The message.
    public var description: String { message }
}

/// A `berth_status` a plugin's call returned (berth.h's `BERTH_ERR_*`, which these cases follow).
public enum PluginStatus: Sendable, Equatable {
    /// `BERTH_ERR_INVALID_ARGUMENT`: a caller passed something malformed.
    case invalidArgument
    /// `BERTH_ERR_NOT_FOUND`: a route, key, state slot or screen does not exist.
    case notFound
    /// `BERTH_ERR_UNSUPPORTED`: the other side does not implement this.
    case unsupported
    /// `BERTH_ERR_STATE`: illegal in the current lifecycle state.
    case state
    /// `BERTH_ERR_FAILED`: the operation ran and failed.
    case failed
    /// `BERTH_ERR_CANCELLED`: a managed task was cancelled.
    case cancelled
    /// `BERTH_ERR_DECODE`: a payload could not be decoded.
    case decode
    /// `BERTH_ERR_DENIED`: the manifest does not declare the capability the call needs.
    case denied
    /// A code berth.h does not define (a plugin built against a newer header, or a bad one).
    case other(Int32)

    /// The status of berth.h's `code` (`BERTH_OK` is no failure and reads as `other(0)`).
    public init(code: Int32) {
        switch code {
        case Int32(BERTH_ERR_INVALID_ARGUMENT): self = .invalidArgument
        case Int32(BERTH_ERR_NOT_FOUND): self = .notFound
        case Int32(BERTH_ERR_UNSUPPORTED): self = .unsupported
        case Int32(BERTH_ERR_STATE): self = .state
        case Int32(BERTH_ERR_FAILED): self = .failed
        case Int32(BERTH_ERR_CANCELLED): self = .cancelled
        case Int32(BERTH_ERR_DECODE): self = .decode
        case Int32(BERTH_ERR_DENIED): self = .denied
        default: self = .other(code)
        }
    }
}
