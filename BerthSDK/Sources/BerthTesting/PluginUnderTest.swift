import Foundation

/// The plugin of the package under test, loaded by a real host and shown on a headless
/// terminal, for a test to drive by label and by key and to check by text or golden frame.
///
///     let plugin = try await PluginUnderTest(isolation: .worker)
///     try await plugin.open("hello")
///     try await plugin.tap("Wave")
///     #expect(plugin.text.contains("Waved 1 time(s)"))
///
/// The library is the one this `swift test` run just built (never a packed copy), packed
/// into a temporary folder as `berth pack` would. The host is `berth test-host` (this
/// checkout's `berth`, or `$BERTH_EXECUTABLE`), with `berth-worker` beside it. Every method
/// that talks to the host is `async` and returns once the frame it leads to is drawn;
/// `frame` and `text` read that frame. A call that fails throws a `BerthTestingError` whose
/// message starts with the test's file and the line of that call (`HelloTests.swift:21: …`).
/// Docs/testing-plugins.md has the details.
public final class PluginUnderTest: @unchecked Sendable {
    /// Where the plugin runs.
    public let isolation: PluginIsolation
    private let host: TestHostProcess
    /// One request at a time; each is answered on this queue, never on a test's thread.
    private let queue = DispatchQueue(label: "BerthTesting.PluginUnderTest")
    private let lock = NSLock()
    private var current = Frame(text: "", styles: "")

    /// Starts a host with the package's plugin in it (`isolation`), on a `width` × `height`
    /// headless terminal showing the start screen. `library` names the built library when
    /// the package has more than one `.dynamic` product (`libHello.so`); `filePath` finds the
    /// package, and with `line` names the call in an error (leave them as they are).
    public init(isolation: PluginIsolation = .worker, library: String? = nil, width: Int = 80, height: Int = 24,
                filePath: String = #filePath, line: Int = #line) async throws {
        self.isolation = isolation
        let call = CallSite(filePath: filePath, line: line)
        do throws(BerthTestingError) {
            let package = try TestBuild.package(holding: filePath)
            let built = try TestBuild.library(named: library, package: package)
            let berth = try TestBuild.berth()
            let worker = try TestBuild.worker(besides: berth)
            host = try TestHostProcess(berth: berth, worker: worker, package: package, library: built, isolation: isolation, width: width, height: height)
        } catch {
            throw error.located(at: call)
        }
        // Packing runs the library once to read what it states; a worker starts after it.
        try await exchange(nil, within: 120, at: call)
    }

    /// The frame on the headless terminal now.
    public var frame: Frame { lock.withLock { current } }
    /// The frame's text (`frame.text`).
    public var text: String { frame.text }
    /// What the host and the plugin logged so far (plugin log lines, crash reports).
    public var log: String { host.log }

    /// Opens `route` (`hello`, or `com.example.hello/hello`) as the top screen, handing it
    /// `argument` as UTF-8 bytes.
    public func open(_ route: String, argument: String = "", filePath: String = #filePath, line: Int = #line) async throws {
        try await exchange(["op": "open", "route": route, "argument": argument], at: CallSite(filePath: filePath, line: line))
    }

    /// Clicks the control labelled `label`: a Button, Toggle, Stepper, TextField or Picker
    /// by its label, a picker's option, an action by its name, a route of the start screen.
    /// A button is pressed, a toggle flipped, an option selected, a stepper, text field or
    /// picker focused (press or type then).
    public func tap(_ label: String, filePath: String = #filePath, line: Int = #line) async throws {
        try await exchange(["op": "tap", "label": label], at: CallSite(filePath: filePath, line: line))
    }

    /// Presses `keys`, one after the other, each once the work of the one before has returned.
    public func press(_ keys: Key..., filePath: String = #filePath, line: Int = #line) async throws {
        for key in keys { try await exchange(["op": "press", "key": key.wireName], at: CallSite(filePath: filePath, line: line)) }
    }

    /// Types `text`, a key per character (into the focused text field).
    public func type(_ text: String, filePath: String = #filePath, line: Int = #line) async throws {
        try await exchange(["op": "type", "text": text], at: CallSite(filePath: filePath, line: line))
    }

    /// Pastes `text` at once (bracketed paste: never read as keys).
    public func paste(_ text: String, filePath: String = #filePath, line: Int = #line) async throws {
        try await exchange(["op": "paste", "text": text], at: CallSite(filePath: filePath, line: line))
    }

    /// Lets the host run (a task's posts, a route context) until the frame shows `text`;
    /// throws when it has not after `seconds`.
    public func waitFor(_ text: String, seconds: Double = 10, filePath: String = #filePath, line: Int = #line) async throws {
        try await exchange(["op": "wait", "text": text, "seconds": seconds], within: seconds + 60, at: CallSite(filePath: filePath, line: line))
    }

    /// Resizes the headless terminal and draws the frame again.
    public func resize(width: Int, height: Int, filePath: String = #filePath, line: Int = #line) async throws {
        try await exchange(["op": "resize", "width": width, "height": height], at: CallSite(filePath: filePath, line: line))
    }

    /// Draws what changed since the last request (a tick that landed since) and reads it.
    public func refresh(filePath: String = #filePath, line: Int = #line) async throws {
        try await exchange(["op": "frame"], at: CallSite(filePath: filePath, line: line))
    }

    /// Compares the frame with the golden file `Frames/<name>.txt` beside the test file.
    /// A missing file, or any file when `BERTH_UPDATE_FRAMES=1`, is written from this frame
    /// and the check fails once, so a new golden is always looked at before it counts.
    public func expectFrame(_ name: String, filePath: String = #filePath, line: Int = #line) throws {
        do throws(BerthTestingError) {
            try GoldenFrame(name: name, besides: filePath).check(frame)
        } catch {
            throw error.located(at: CallSite(filePath: filePath, line: line))
        }
    }

    @discardableResult
    private func exchange(_ request: [String: Any]?, within seconds: Double = 60, at call: CallSite) async throws(BerthTestingError) -> Frame {
        do throws(BerthTestingError) {
            return try await exchange(request, within: seconds)
        } catch {
            throw error.located(at: call)
        }
    }

    private func exchange(_ request: [String: Any]?, within seconds: Double) async throws(BerthTestingError) -> Frame {
        let host = self.host
        let box = RequestBox(request)
        let result: Result<[String: Any], BerthTestingError> = await withCheckedContinuation { continuation in
            queue.async {
                do throws(BerthTestingError) {
                    continuation.resume(returning: .success(try host.exchange(box.request, within: seconds)))
                } catch {
                    continuation.resume(returning: .failure(error))
                }
            }
        }
        let reply = try result.get()
        if let text = reply["text"] as? String, let styles = reply["styles"] as? String {
            lock.withLock { current = Frame(text: text, styles: styles) }
        }
        if let error = reply["error"] as? String { throw BerthTestingError(error) }
        return frame
    }
}

/// A request handed to the queue (JSON values only: strings and numbers).
private struct RequestBox: @unchecked Sendable {
    var request: [String: Any]?
    init(_ request: [String: Any]?) { self.request = request }
}
