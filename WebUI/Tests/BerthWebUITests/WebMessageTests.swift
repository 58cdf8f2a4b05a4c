@testable import BerthWebUI
import BerthRuntime
import Foundation
import Testing

/// The page's messages become the CLI's types or one-line errors; patches carry what changed.
@Suite("web messages and patches")
struct WebMessageTests {
    private func command(_ json: String) -> Result<WebCommand, WebCommandError> {
        WebRequest.parse(Array(json.utf8)).command
    }

    @Test("routes and view input are parsed into Route and ViewInput")
    func parsed() throws {
        #expect(try command(#"{"op":"open","route":"com.example.counter/counter"}"#).get() == .open(Route(plugin: "com.example.counter", name: "counter")))
        #expect(try command(#"{"op":"input","screen":3,"view":"V/Stepper","input":"step","value":"+"}"#).get() == .input(screen: 3, view: "V/Stepper", .step(.up)))
        #expect(try command(#"{"op":"input","screen":3,"view":"P","input":"select","value":"2"}"#).get() == .input(screen: 3, view: "P", .select(2)))
        #expect(try command(#"{"op":"input","screen":1,"view":"T","input":"type","value":"<b>x</b>"}"#).get() == .input(screen: 1, view: "T", .type("<b>x</b>")))
    }

    @Test("a malformed message is refused with one line")
    func refused() {
        let cases = [
            #"{"op":"open","route":"a/b/c"}"#: "more than one '/'",
            #"{"op":"input","screen":1,"view":"S","input":"step","value":"up"}"#: "step takes + or -, got 'up'",
            #"{"op":"input","screen":1,"view":"P","input":"select","value":"-1"}"#: "select takes an option index",
            #"{"op":"input","screen":1,"input":"tap"}"#: "'input' needs \"view\"",
            #"{"op":"explode"}"#: "unknown op 'explode'",
            #"not json"#: "not a command",
        ]
        for (json, words) in cases {
            guard case .failure(let error) = command(json) else {
                Issue.record("\(json) was accepted")
                continue
            }
            #expect(error.description.contains(words), "\(json): \(error)")
            #expect(!error.description.contains("\n"))
        }
    }

    private func node(_ id: String, _ fields: [String: String] = [:], _ children: [WebViewNode] = []) -> WebViewNode {
        WebViewNode(type: children.isEmpty ? "Text" : "VStack", id: id, fields: fields, children: children)
    }

    private func state(_ tree: WebViewNode) -> WebState {
        var state = WebState()
        state.screens = [WebScreen(id: 1, route: "p/r", plugin: "p", title: nil, presented: false, state: "active", busy: false, tree: tree, actions: [])]
        return state
    }

    @Test("a changed text is one node in the patch; a new row replaces its list; a new screen sends the screens")
    func patches() throws {
        let before = state(node("root", [:], [node("a", ["text": "1"]), node("b", ["text": "x"])]))
        let tick = WebStatePatch(from: before, to: state(node("root", [:], [node("a", ["text": "2"]), node("b", ["text": "x"])])), version: 2)
        #expect(tick.screens == nil)
        #expect(tick.nodes?.map(\.node.id) == ["a"])
        let row = WebStatePatch(from: before, to: state(node("root", [:], [node("a", ["text": "1"]), node("b", ["text": "x"]), node("c")])), version: 2)
        #expect(row.nodes?.map(\.node.id) == ["root"])
        var opened = state(node("root"))
        opened.screens.append(WebScreen(id: 2, route: "p/s", plugin: "p", title: nil, presented: true, state: "active", busy: false, tree: nil, actions: []))
        let open = WebStatePatch(from: before, to: opened, version: 2)
        #expect(open.screens?.count == 2 && open.nodes == nil)
        #expect(WebStatePatch(from: before, to: before, version: 2).isEmpty)
    }

    @Test("the access policy: token, Host and Origin")
    func policy() {
        let policy = WebAccessPolicy(token: "abc123")
        policy.port = 8642
        #expect(policy.refusal(target: "/?token=abc123", host: "127.0.0.1:8642", origin: nil) == nil)
        #expect(policy.refusal(target: "/ws?token=abc123", host: "localhost:8642", origin: "http://localhost:8642") == nil)
        #expect(policy.refusal(target: "/?token=abc124", host: "127.0.0.1:8642", origin: nil)?.contains("token is wrong") == true)
        #expect(policy.refusal(target: "/", host: "127.0.0.1:8642", origin: nil)?.contains("token is missing") == true)
        #expect(policy.refusal(target: "/?token=abc123", host: "evil.example:8642", origin: nil)?.contains("Host 'evil.example:8642'") == true)
        #expect(policy.refusal(target: "/?token=abc123", host: "127.0.0.1:8642", origin: "http://evil.example")?.contains("Origin") == true)
        #expect(WebAccessPolicy().token.count == 64)
    }
}
