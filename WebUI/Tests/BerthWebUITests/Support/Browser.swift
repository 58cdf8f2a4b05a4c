import Foundation
import Testing

/// Headless Chromium driven through chromedriver's WebDriver protocol (JSON over HTTP).
/// A missing browser fails the test with one line naming the script that installs it.
final class Browser: @unchecked Sendable {
    private var driver = Process()
    private var base = ""
    private var port = 0
    /// Chromium's profile folder, removed at the end.
    private let profile = NSTemporaryDirectory() + "berth-chromium-" + UUID().uuidString.prefix(8)
    private var session = ""

    /// Starts chromedriver and a headless Chromium window of `width` × `height`.
    init(width: Int = 1280, height: Int = 800) async throws {
        let chromium = ["/usr/bin/chromium", "/usr/bin/chromium-browser"].first { FileManager.default.isExecutableFile(atPath: $0) }
        let chromedriver = ["/usr/bin/chromedriver"].first { FileManager.default.isExecutableFile(atPath: $0) }
        guard let chromium, let chromedriver else {
            throw WebHostError(line: "headless Chromium or chromedriver is not installed: run scripts/install-browser")
        }
        var ready = false
        var lastError = ""
        // A random port may be taken (chromedriver then exits at once): up to three ports.
        for _ in 0..<3 where !ready {
            port = Int.random(in: 20_000...40_000)
            base = "http://127.0.0.1:\(port)"
            driver = Process()
            driver.executableURL = URL(fileURLWithPath: chromedriver)
            driver.arguments = ["--port=\(port)", "--allowed-ips=127.0.0.1"]
            driver.standardOutput = FileHandle.nullDevice
            driver.standardError = FileHandle.nullDevice
            try driver.run()
            for _ in 0..<400 where !ready && driver.isRunning {
                try await Task.sleep(for: .milliseconds(50))
                do {
                    _ = try await call("GET", "/status")
                    ready = true
                } catch {
                    lastError = "\(error)"
                }
            }
            if !ready, driver.isRunning {
                kill(driver.processIdentifier, SIGKILL)
                driver.waitUntilExit()
            }
        }
        guard ready else { throw WebHostError(line: "chromedriver did not answer on \(base): \(lastError)") }
        let arguments = ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--hide-scrollbars",
                         "--force-device-scale-factor=1", "--window-size=\(width),\(height)", "--font-render-hinting=none",
                         "--user-data-dir=" + profile]
        let capabilities: [String: Any] = ["capabilities": ["alwaysMatch": [
            "browserName": "chrome", "goog:chromeOptions": ["binary": chromium, "args": arguments],
        ]]]
        let reply = try await call("POST", "/session", capabilities)
        session = try #require((reply as? [String: Any])?["sessionId"] as? String, "no WebDriver session: \(reply)")
    }

    /// Ends the session (Chromium exits) and chromedriver; synchronous, for `defer`.
    func quitNow() {
        _ = try? RawHTTP.exchange(port: port, method: "DELETE", path: "/session/\(session)", body: nil)
        // chromedriver does not always leave on SIGTERM.
        kill(driver.processIdentifier, SIGKILL)
        driver.waitUntilExit()
        try? FileManager.default.removeItem(atPath: profile)
    }

    deinit {
        if driver.isRunning { kill(driver.processIdentifier, SIGKILL) }
    }

    // MARK: Commands

    func open(_ url: String) async throws {
        _ = try await call("POST", "/session/\(session)/url", ["url": url])
    }

    /// Runs `script` (a function body; `arguments` are its `arguments`) in the page and
    /// returns its value.
    @discardableResult
    func run(_ script: String, _ arguments: [Any] = []) async throws -> Any? {
        try await call("POST", "/session/\(session)/execute/sync", ["script": script, "args": arguments])
    }

    /// The element `css` selects (the first), as a WebDriver element id.
    func find(_ css: String) async throws -> String {
        let found = try await call("POST", "/session/\(session)/element", ["using": "css selector", "value": css])
        return try #require((found as? [String: Any])?.values.first as? String, "no element '\(css)'")
    }

    /// A mouse click on the element `css` selects.
    func click(_ css: String) async throws {
        // A live page may replace the element between finding and clicking it: find it again.
        for attempt in 1...5 {
            let element = try await find(css)
            do {
                _ = try await call("POST", "/session/\(session)/element/\(element)/click", [String: Any]())
                return
            } catch let error as WebHostError where error.line.contains("stale element") && attempt < 5 {
                try await Task.sleep(for: .milliseconds(50))
            }
        }
    }

    /// Types `text` into the element `css` selects.
    func type(_ text: String, into css: String) async throws {
        let element = try await find(css)
        _ = try await call("POST", "/session/\(session)/element/\(element)/value", ["text": text])
    }

    /// Keys pressed and released in order, at whatever has focus (`Key.tab` …, or characters).
    func press(_ keys: String...) async throws {
        let actions = keys.flatMap { key in [["type": "keyDown", "value": key], ["type": "keyUp", "value": key]] }
        _ = try await call("POST", "/session/\(session)/actions", ["actions": [["type": "key", "id": "keyboard", "actions": actions]]])
    }

    /// A PNG of the window.
    func screenshot() async throws -> Data {
        let encoded = try #require(try await call("GET", "/session/\(session)/screenshot") as? String)
        return try #require(Data(base64Encoded: encoded))
    }

    /// Waits until `script` (a function body) returns true in the page; false at the deadline.
    func waitUntil(_ script: String, timeout: Duration = .seconds(30)) async throws -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if try await run(script) as? Bool == true { return true }
            try await Task.sleep(for: .milliseconds(50))
        }
        return try await run(script) as? Bool == true
    }

    /// The text of the page's `main` (the screens), as the person reads it.
    func mainText() async throws -> String {
        try await run("return document.getElementById('main').innerText;") as? String ?? ""
    }

    /// Waits until the screen shows `text`.
    func waitForText(_ text: String, in selector: String = "body", timeout: Duration = .seconds(30)) async throws -> Bool {
        try await waitUntil("const e = document.querySelector(\(Self.quoted(selector))); return !!e && e.innerText.includes(\(Self.quoted(text)));", timeout: timeout)
    }

    static func quoted(_ text: String) -> String {
        let data = try? JSONSerialization.data(withJSONObject: [text])
        return String(decoding: data ?? Data("[\"\"]".utf8), as: UTF8.self).dropFirst().dropLast().description
    }

    // MARK: The protocol

    /// A command of this session (`path` below `/session/ID/`).
    func command(_ method: String, _ path: String, _ body: Any? = nil) async throws -> Any? {
        try await call(method, "/session/\(session)/" + path, body)
    }

    private func call(_ method: String, _ path: String, _ body: Any? = nil) async throws -> Any? {
        let payload = try body.map { try JSONSerialization.data(withJSONObject: $0) }
        let data = try RawHTTP.exchange(port: port, method: method, path: path, body: payload)
        let reply = try JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed]) as? [String: Any]
        let value = reply?["value"]
        if let error = value as? [String: Any], let kind = error["error"] as? String {
            throw WebHostError(line: "WebDriver \(method) \(path): \(kind): \((error["message"] as? String)?.split(separator: "\n").first ?? "")")
        }
        return value is NSNull ? nil : value
    }
}

/// WebDriver's key codes.
enum Key {
    static let tab = "\u{E004}"
    static let enter = "\u{E007}"
    static let escape = "\u{E00C}"
    static let space = " "
    static let shift = "\u{E008}"
}

extension Browser {
    /// Runs `script`, an async function body whose last argument is its callback.
    func runAsync(_ script: String, _ arguments: [Any] = []) async throws -> Any? {
        try await command("POST", "execute/async", ["script": script, "args": arguments])
    }
}
