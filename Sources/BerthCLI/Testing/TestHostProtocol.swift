@_spi(Engine) import BerthRuntime
import BerthTerminalUI
import Foundation

/// What `berth test-host` reads and writes: one JSON object a line each way.
///
/// Requests (`op` and its fields): `open` route [argument], `press` key, `type` text,
/// `paste` text, `tap` label, `wait` text seconds, `resize` width height, `frame`.
/// Every reply is `{"text": …, "styles": …}` for the frame after the request, with
/// `"error"` when the request failed (the frame is still the current one).
@MainActor
enum TestHostProtocol {
    struct Failure: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }

    /// Where replies go: the process's stdout as it started. `takeStandardOutput` points fd 1
    /// at stderr, so what a plugin prints in process goes with the log, never into a reply.
    private static var replies = FileHandle.standardOutput

    static func takeStandardOutput() {
        let saved = dup(STDOUT_FILENO)
        guard saved >= 0, dup2(STDERR_FILENO, STDOUT_FILENO) >= 0 else { return }
        replies = FileHandle(fileDescriptor: saved, closeOnDealloc: true)
    }

    /// Stdin's lines, read on a thread of their own so the main actor stays free for the
    /// host (a worker's messages, a managed task's posts). Ends at end of input.
    static func requests() -> AsyncStream<String> {
        AsyncStream { continuation in
            Thread.detachNewThread {
                while let line = readLine(strippingNewline: true) { continuation.yield(line) }
                continuation.finish()
            }
        }
    }

    static func perform(_ line: String, on terminal: HeadlessTerminal) async throws {
        guard let request = (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any], let op = request["op"] as? String else {
            throw Failure("test-host: not a JSON request with an \"op\": \(line)")
        }
        func field(_ name: String) throws -> String {
            guard let value = request[name] as? String else { throw Failure("test-host: '\(op)' needs the string field \"\(name)\"") }
            return value
        }
        switch op {
        case "open":
            let route = try Route(parsing: try field("route"))
            let argument = Array(((request["argument"] as? String) ?? "").utf8)
            try await terminal.app.host.open(route, argument: argument)
            await terminal.app.laneOperationsReturned()
            terminal.settle()
        case "press":
            let name = try field("key")
            guard let key = key(named: name) else { throw Failure("test-host: '\(name)' is not a key name (Docs/testing-plugins.md lists them)") }
            await terminal.press(key)
        case "type":
            await terminal.type(try field("text"))
        case "paste":
            await terminal.paste(try field("text"))
        case "tap":
            let label = try field("label")
            let placed = try target(labelled: label, on: terminal)
            await terminal.click(column: placed.column, row: placed.row)
        case "wait":
            let text = try field("text")
            let seconds = request["seconds"] as? Double ?? 10
            guard await terminal.waitFor(text, timeout: .milliseconds(Int(seconds * 1000))) else {
                throw Failure("'\(text)' did not appear on the frame within \(seconds) s")
            }
        case "resize":
            guard let width = request["width"] as? Int, let height = request["height"] as? Int, width >= 10, height >= 4 else {
                throw Failure("test-host: 'resize' needs \"width\" (at least 10) and \"height\" (at least 4)")
            }
            terminal.resize(width: width, height: height)
        case "frame":
            terminal.settle()
        default:
            throw Failure("test-host: unknown op '\(op)'")
        }
    }

    /// The key a name stands for: the names of Docs/testing-plugins.md (`tab`, `shift-tab`,
    /// `ctrl-c`, `f2`, one character …).
    nonisolated static func key(named name: String) -> Key? {
        let named: [String: Key] = [
            "enter": .enter, "tab": .tab, "shift-tab": .backTab, "escape": .escape, "backspace": .backspace, "delete": .delete,
            "space": .character(" "), "up": .up, "down": .down, "left": .left, "right": .right, "home": .home, "end": .end,
            "page-up": .pageUp, "page-down": .pageDown,
        ]
        if let key = named[name] { return key }
        if name.count == 1, let character = name.first { return .character(character) }
        if name.hasPrefix("ctrl-"), name.count == 6, let letter = name.last, letter.isASCII, letter.isLowercase { return .control(letter) }
        if name.hasPrefix("f"), let number = Int(name.dropFirst()), (1...12).contains(number) { return .function(number) }
        return nil
    }

    /// The control on the frame whose label is `label`: a view's label (Button, Toggle,
    /// Stepper, TextField, Picker), a picker's option, an action's name, or a route on the
    /// start screen.
    static func target(labelled label: String, on terminal: HeadlessTerminal) throws -> PlacedTarget {
        let nodes = terminal.app.host.visibleRouter?.module?.lastTree?.root?.allNodes ?? []
        let placed = terminal.app.rendered?.targets ?? []
        func name(of target: FocusTarget) -> String? {
            switch target {
            case .view(let id): nodes.first { $0.id == id }.flatMap { $0.fields["label"] ?? $0.fields["text"] }
            case .action(let action): action
            case .route(let route): route.description
            case .option(let id, let index):
                nodes.first { $0.id == id }.flatMap { $0.children.indices.contains(index) ? $0.children[index].fields["text"] : nil }
            case .back: nil
            }
        }
        if let found = placed.first(where: { name(of: $0.target) == label || ($0.target.routeName == label) }) { return found }
        var labels: [String] = []
        for target in placed { if let name = name(of: target.target), !labels.contains(name) { labels.append(name) } }
        throw Failure("no control labelled '\(label)' on the screen; its labels: \(labels.isEmpty ? "none" : labels.map { "'\($0)'" }.joined(separator: ", "))")
    }

    /// Writes one reply line: the frame's text and style mask, and the error, if any.
    static func reply(_ terminal: HeadlessTerminal, error: String? = nil) {
        var object: [String: Any] = ["text": terminal.frame.text, "styles": terminal.frame.styleMask]
        if let error { object["error"] = error }
        write(object)
    }

    /// A reply with no frame (the host could not start).
    static func reply(error: String) {
        write(["error": error])
    }

    private static func write(_ object: [String: Any]) {
        guard let data = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]) else { return }
        replies.write(data + Data("\n".utf8))
    }
}

private extension FocusTarget {
    /// A route's bare name, so a start-screen route is found by `hello` as well as by
    /// `com.example.hello/hello`.
    var routeName: String? {
        if case .route(let route) = self { return route.name }
        return nil
    }
}
