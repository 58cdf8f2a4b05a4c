@_spi(Engine) import BerthRuntime
import BerthTerminalUI
import BerthTestSupport
import Testing

/// Every example screen as the front end draws it, compared with its stored frame (text and
/// styles). The same frames hold in both isolation modes.
@Suite("Terminal UI: golden frames") @MainActor
struct GoldenFrameTests {
    @Test("the start screen lists every route to open, the first focused")
    func startScreen() throws {
        let front = try FrontEndHost()
        GoldenFrame.check(front.terminal, "start")
    }

    @Test("Counter: its stepper, button, toggle and branch, its actions, and the header")
    func counter() throws {
        // A tick interval long enough that no tick lands while the frame is compared.
        let front = try FrontEndHost(opening: "counter", argument: "3600000")
        GoldenFrame.check(front.terminal, "counter")
    }

    @Test("Counter with its details open shows the text field of the branch")
    func counterDetails() async throws {
        let front = try FrontEndHost(opening: "counter", argument: "3600000")
        #expect(await front.terminal.click(on: "[ ] Details"))
        #expect(front.terminal.text.contains("[x] Details"))
        GoldenFrame.check(front.terminal, "counter-details")
    }

    @Test("a failed build's problems: a panel above the status line, the screen above it shorter; gone when cleared")
    func buildProblems() throws {
        let front = try FrontEndHost(opening: "counter", argument: "3600000")
        let before = front.terminal.text
        let errors = (1...12).map { "Sources/Counter/Counter.swift:\($0 + 10):5: error: cannot find 'count\($0)' in scope" }
        front.terminal.app.showProblems(["build failed (swift build): 12 errors"] + errors)
        front.terminal.settle()
        GoldenFrame.check(front.terminal, "build-problems")
        #expect(front.terminal.text.contains("✖ build failed (swift build): 12 errors"))
        #expect(front.terminal.text.contains("… 4 more lines (F2 inspector)"))
        #expect(front.terminal.text.contains("Sources/Counter/Counter.swift:11:5: error: cannot find 'count1' in scope"))
        // A line wider than the terminal ends in an ellipsis where it is cut; one that fits does not.
        let long = "Sources/Counter/Counter.swift:40:17: error: cannot convert value of type 'String' to expected argument type 'Int' in call"
        let fits = "Sources/Counter/Counter.swift:41:5: error: missing return"
        front.terminal.app.showProblems(["build failed (swift build): 2 errors", long, fits])
        front.terminal.settle()
        let rows = front.terminal.text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let cut = try #require(rows.first { $0.hasPrefix("  Sources/Counter/Counter.swift:40:17") }, "\(front.terminal.text)")
        #expect(cut.count == 80 && cut.hasSuffix("…") && long.hasPrefix(cut.dropFirst(2).dropLast()), "\(cut)")
        #expect(rows.contains("  " + fits), "\(front.terminal.text)")
        front.terminal.app.showProblems(nil)
        front.terminal.settle()
        #expect(front.terminal.text == before)
    }

    @Test("Inbox: a list of rows from ForEach, each an HStack with its toggle")
    func inbox() throws {
        let front = try FrontEndHost(opening: "inbox")
        GoldenFrame.check(front.terminal, "inbox")
    }

    @Test("compose presented over the inbox: a boxed layer over its faint presenter")
    func composeOverInbox() async throws {
        let front = try FrontEndHost(opening: "inbox")
        #expect(await front.terminal.click(on: "< compose >"))
        #expect(front.host.visibleRouter?.route == "compose")
        GoldenFrame.check(front.terminal, "compose-over-inbox")
    }

    @Test("Greeter (a C plugin's JSON tree)")
    func greeter() throws {
        let front = try FrontEndHost(opening: "hello")
        GoldenFrame.check(front.terminal, "greeter")
    }

    @Test("UserPicker: the list screen (actions only) and the detail screen pushed on it")
    func userPicker() async throws {
        let front = try FrontEndHost(opening: "users")
        GoldenFrame.check(front.terminal, "users")
        try front.host.push("user-detail", argument: Array("ada".utf8))
        front.terminal.settle()
        GoldenFrame.check(front.terminal, "user-detail")
    }

    @Test("Profile and its card")
    func profile() throws {
        let front = try FrontEndHost(opening: "profile")
        GoldenFrame.check(front.terminal, "profile")
        try front.host.push("profile-card")
        front.terminal.settle()
        GoldenFrame.check(front.terminal, "profile-card")
    }
}
