public import BerthRuntime
import Foundation

/// What a page asks the host to do, typed: routes are `Route`s and view input is a
/// `ViewInput`, the same types the CLI's commands make, so a malformed value is refused
/// here, before any plugin runs.
public enum WebCommand: Sendable, Equatable {
    /// Push a route on the visible stack (the start list, `open`), with its argument's text.
    case open(Route, argument: String = "")
    /// Present a route over the visible screen.
    case present(Route)
    /// Back on the visible stack.
    case back
    /// Dismiss the visible modal layer.
    case dismiss
    /// Close the launch stack's root (back to the start list).
    case close
    /// Input to one view of one screen.
    case input(screen: Int, view: String, ViewInput)
    /// A declared action, with its text (empty: none).
    case action(screen: Int, name: String, text: String)
    /// Reload a plugin, keeping its state.
    case reload(plugin: String)
    /// Take the banner away, for every page.
    case dismissBanner
}

/// Why a page's message was refused, or what the host said: one line.
public struct WebCommandError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The line.
    public var description: String

    /// An error saying `line`.
    public init(_ line: String) {
        description = line
    }
}

/// A page's message as it arrives (JSON): `{"op": "input", "screen": 3, "view": "…",
/// "input": "step", "value": "+", "request": 7}`.
struct WebRequest: Decodable {
    var op: String
    var request: Int?
    var route: String?
    var screen: Int?
    var view: String?
    var input: String?
    var value: String?
    var action: String?
    var text: String?
    var plugin: String?
    var argument: String?

    /// The request number (echoed with its result) and the command, or why it is refused.
    static func parse(_ bytes: some Collection<UInt8>) -> (request: Int?, command: Result<WebCommand, WebCommandError>) {
        let request: WebRequest
        do {
            request = try JSONDecoder().decode(WebRequest.self, from: Data(bytes))
        } catch {
            return (nil, .failure(WebCommandError("the page's message is not a command (JSON with an \"op\"): \(Self.reason(error))")))
        }
        do {
            return (request.request, .success(try request.command()))
        } catch {
            return (request.request, .failure(error))
        }
    }

    private static func reason(_ error: any Error) -> String {
        switch error {
        case DecodingError.keyNotFound(let key, _): "no \"\(key.stringValue)\""
        case DecodingError.typeMismatch(_, let context), DecodingError.dataCorrupted(let context):
            context.codingPath.last.map { "\"\($0.stringValue)\" has the wrong type" } ?? "malformed JSON"
        default: "malformed JSON"
        }
    }

    func command() throws(WebCommandError) -> WebCommand {
        switch op {
        case "open": return .open(try route(required()), argument: argument ?? "")
        case "present": return .present(try route(required()))
        case "back": return .back
        case "dismiss": return .dismiss
        case "close": return .close
        case "dismissBanner": return .dismissBanner
        case "reload": return .reload(plugin: try required(plugin, "plugin"))
        case "action":
            return .action(screen: try required(screen, "screen"), name: try required(action, "action"), text: text ?? "")
        case "input":
            let screen = try required(screen, "screen")
            let view = try required(view, "view")
            return .input(screen: screen, view: view, try viewInput(try required(input, "input")))
        default:
            throw WebCommandError("unknown op '\(op)' (open, present, back, dismiss, close, input, action, reload, dismissBanner)")
        }
    }

    private func required() throws(WebCommandError) -> String {
        try required(route, "route")
    }

    private func required<Value>(_ value: Value?, _ name: String) throws(WebCommandError) -> Value {
        guard let value else { throw WebCommandError("'\(op)' needs \"\(name)\"") }
        return value
    }

    private func route(_ text: String) throws(WebCommandError) -> Route {
        do {
            return try Route(parsing: text)
        } catch {
            throw WebCommandError(error.description)
        }
    }

    /// `tap`, `toggle`, `type` + text, `step` + `+`/`-`, `select` + an index: as the CLI's
    /// `tap`, `toggle`, `type`, `step` and `select` commands take them.
    private func viewInput(_ name: String) throws(WebCommandError) -> ViewInput {
        switch name {
        case "tap": return .tap
        case "toggle": return .toggle
        case "type": return .type(value ?? "")
        case "step":
            switch value {
            case "+": return .step(.up)
            case "-": return .step(.down)
            default: throw WebCommandError("step takes + or -, got '\(value ?? "")'")
            }
        case "select":
            guard let value, let index = Int(value), index >= 0 else {
                throw WebCommandError("select takes an option index (0, 1, …), got '\(value ?? "")'")
            }
            return .select(index)
        default:
            throw WebCommandError("unknown input '\(name)' (tap, toggle, type, step, select)")
        }
    }
}
