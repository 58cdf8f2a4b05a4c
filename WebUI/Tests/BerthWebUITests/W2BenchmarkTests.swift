@_spi(Engine) import BerthRuntime
import Foundation
import Testing

/// W2 (Docs/benchmarks.md): a tap in the browser on a 1,000-view screen until the page's
/// DOM is updated, timed in the page (`performance.now()` from the send to the `done` that
/// follows its patch), against the same input and render in a host with no front end. It
/// prints both medians and their ratio; it asserts only that the DOM followed every tap.
@Suite("W2: browser input on a 1,000-view screen", .serialized)
struct W2BenchmarkTests {
    static let rows = "1000"
    static let taps = 60

    @Test("W2 in both isolation modes", arguments: isolationModes)
    func w2(isolation: String) async throws {
        let page = try await WebSessionFixture(isolation: isolation) { workspace in
            try workspace.stage(manifest: try Workspace.manifest("stress.json"), library: "libBerthStress.so")
        }
        defer { page.close() }
        try await page.send(["op": "open", "route": "org.berth.stress/grid", "argument": Self.rows])
        #expect(try await page.browser.waitUntil("return document.querySelectorAll('main .list button').length === \(Self.rows);", timeout: .seconds(120)))
        let timings = try await page.browser.runAsync("""
            const done = arguments[arguments.length - 1];
            const page = window.berthPage; const taps = arguments[0];
            const button = () => document.querySelector('main .list button');
            let tap = 0; const start = page.timings.length;
            const next = () => {
              if (tap === taps) { done(page.timings.slice(start)); return; }
              const expected = `row 0: ${tap + 1}`;
              const before = page.timings.length;
              button().click();
              const wait = () => {
                if (page.timings.length > before && button().textContent === expected) { tap++; setTimeout(next, 0); } else setTimeout(wait, 0);
              };
              wait();
            };
            next();
            """, [Self.taps]) as? [Double] ?? []
        #expect(timings.count == Self.taps, "every tap's patch reached the DOM")
        let page2 = Self.median(timings)

        // The floor: the same tap and render, in a host of this process with no front end.
        let floor = try await Task { @MainActor () throws -> Double in
            try FileManager.default.createDirectory(atPath: page.workspace.root + "/floor", withIntermediateDirectories: true)
            var configuration = BerthHost.Configuration(pluginFolders: [page.workspace.plugins], runtimeBase: page.workspace.root + "/floor")
            configuration.isolation = IsolationSettings(policy: .always(isolation == "process" ? .process : .inProcess),
                                                       workerExecutable: try Paths.rootProduct("berth-worker"))
            let host = try BerthHost(configuration: configuration)
            defer { host.shutdown() }
            host.discover()
            _ = try host.load("org.berth.stress")
            try await host.openScreen(Route(plugin: "org.berth.stress", name: "grid"), argument: Array(Self.rows.utf8))
            try await host.renderOnLane()
            let first = try #require(host.visibleScreen?.tree?.firstNode { $0.type == "Button" }?.id)
            var samples: [Double] = []
            for _ in 0..<Self.taps {
                let start = ContinuousClock.now
                _ = try await host.input(.tap, view: first)
                let elapsed = ContinuousClock.now - start
                samples.append(Double(elapsed.components.attoseconds) / 1e15 + Double(elapsed.components.seconds) * 1000)
            }
            return Self.median(samples)
        }.value
        let line = String(format: "W2 %@: browser %.2f ms, floor %.2f ms, ratio %.2fx (median of %d taps, %@ rows)", isolation, page2, floor, page2 / floor, Self.taps, Self.rows)
        print(line)
        let record = Paths.package + "/.build/w2-\(isolation).txt"
        try? line.write(toFile: record, atomically: true, encoding: .utf8)
    }

    static func median(_ values: [Double]) -> Double {
        guard !values.isEmpty else { return .nan }
        let sorted = values.sorted()
        return sorted[sorted.count / 2]
    }
}
